"""`kreassign plan`: Kafka's own files in (plan, current assignment, `kafka-topics.sh --describe`),
per-partition phases and exhaustive checks out, with the rollback JSON (docs/plan.md)."""
