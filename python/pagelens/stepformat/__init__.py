"""ScribeAgent's step format, below both the agent and the prep pipeline: the operations a
step can do (:mod:`~pagelens.stepformat.operations`), how a step and a prompt are written and
read (:mod:`~pagelens.stepformat.lines`), and how a page is cut into what the model reads
(:mod:`~pagelens.stepformat.chunks`). It depends on the core and the action vocabulary only:
`pagelens.agents` uses it without loading any of `pagelens.datasets`."""
