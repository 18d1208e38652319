"""Scenarios drawn from the model and replayed on a real Kafka cluster (issue 24, item 2; docs/scenarios.md):
the file format (format.py), model actions ⇄ real steps and the model's expectations (mapping.py), generation
by seeded walks and shortest paths (generate.py), the wait conditions and observations (conditions.py), and
the run on a cluster with its comparison against the reference (run.py)."""
