"""Taking in a submission (autograder/intake/): staging, zips, notebooks."""
