"""What an instructor reads (autograder/reports/): a batch's reports, the class report."""
