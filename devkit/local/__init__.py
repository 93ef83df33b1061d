"""The pipeline on one machine: an embedded AWS emulator and a runtime that does what AWS would."""
