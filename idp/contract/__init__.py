"""The job contract: pure data every unit shares.

Names, errors, timestamps, jobs (with their chunks), results, the job record and the topology.
Imports nothing else of the project.
"""
