"""The judge of a run's changes, behind one seam (`judge.Judge`) that the agent loop builds once and asks.

It holds: the project's tests as the judge of "done" (`verify`: the verifier and its verdict), the repair rounds
and the ends of a run (`repair`), what a task states and a test run says (`task_examples`, `proof/`), more
candidates (`attempts`) and whole-definition candidates (`rewrite`, whose model requests go through
`agent.model_call`, the loop's request path).

May import: the agent's lower modules (`run_state`, `conversation`, `approval_flow`, `approval`, `model_call`),
prompt, tools and everything below them; never `agent.loop`.
"""
