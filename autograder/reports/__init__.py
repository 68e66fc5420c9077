"""Reports for people: the console's tables and the instructor's class report."""
