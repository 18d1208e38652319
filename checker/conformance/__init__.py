"""`kreassign conformance`: model-drawn scenarios with faults run on a real Kafka cluster, every step compared
with the reference, divergences minimized (docs/conformance.md)."""
