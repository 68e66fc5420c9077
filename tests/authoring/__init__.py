"""The authoring tools (autograder/authoring/): mutate, bench, new-exercise."""
