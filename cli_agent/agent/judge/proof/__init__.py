"""The parts of a verdict on a run's changes that `agent.judge.verify` puts together: what a task states about names
(`statements`: imports, added, renamed and removed names) and what a test run's output says (`test_output`: its
summary, its failures for the model, and whether it could run at all), and what configures the tests besides the
test files (`runner_config`). They import `agent.judge.task_examples` and the
standard library only."""
