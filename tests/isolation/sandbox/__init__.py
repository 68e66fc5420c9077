"""The sandbox's attacks, call by call, on fresh, standby and forked workers."""
