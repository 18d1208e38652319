"""Self-contained HTML reports (docs/report.md): verdicts, step-by-step counterexamples, timelines."""
