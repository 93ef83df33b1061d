"""The `idp` command line: run the pipeline locally, and submit to and inspect a deployed one."""
