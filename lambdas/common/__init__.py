"""Pieces the zip Lambdas share: settings from the environment, AWS error triage, metrics."""
