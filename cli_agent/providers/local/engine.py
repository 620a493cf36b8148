"""The local model's server process: llama.cpp's own HTTP server from the `xllamacpp` wheel, on 127.0.0.1.

    python -m cli_agent.providers.local.engine --model M.gguf --port P --ctx N --threads T --batch-threads B \
        [--slot-save-path DIR] [--speculative ngram_simple|ngram_mod|off] [--keep-record FILE --keep-idle-s N]

`LlamaServer` (providers/local/server.py) starts this as its child; it builds xllamacpp's `CommonParams`, starts
`xllamacpp.Server` (which serves `/v1/chat/completions`, `/v1/models`, `/health` and `/slots` from its own threads)
and sleeps until a signal ends it. One slot with the prompt cache on: each request evaluates only the tokens after
the prefix it shares with the slot's last one. `--speculative` turns on llama.cpp's draft-free speculative decoding
(n-gram lookup: the tokens that followed the same n-gram earlier in the context are proposed and checked in one
batch; a rewrite that copies most of the code it was shown gains most). A server that fails to start (a bad model
file, a port taken) prints one line, `local_engine: ...` with llama.cpp's own error lines, and exits 1; a runtime
that fails to import (another CPU architecture, an old glibc) exits 3.

A server kept between processes (`--keep-record`, providers/local/kept.py) ends by itself: every few seconds it
looks at its record, and once the record is gone, names another server, or has not been touched for `--keep-idle-s`
seconds while no cli-agent holds the lock beside it, it removes the record (under that lock) and exits.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import signal
import sys
import threading
import time
from pathlib import Path

from cli_agent.providers.local.kept import read_record
from cli_agent.providers.local.server import ALIAS, SPECULATIVE


def _params(args: argparse.Namespace) -> object:
    import xllamacpp  # deferred: ~100 MB of shared library, loaded only in the server child

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {ALIAS}
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_ctx = args.ctx
    params.n_parallel = 1  # one slot: every request of a session lands on the cache of the one before
    params.cache_prompt = True
    # No host-memory copies of idle slots' states (llama.cpp keeps up to 8 GiB of them by default): the one slot's
    # own cache serves a session, and the memory stays the model, its context and the compute buffers.
    params.cache_ram_mib = 0
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.batch_threads
    params.ui = False
    params.endpoint_slots = True
    params.sleep_idle_seconds = -1
    if args.speculative != "off":
        kind = getattr(xllamacpp.common_speculative_type, f"COMMON_SPECULATIVE_TYPE_{args.speculative.upper()}")
        params.speculative.types = [kind]
    if args.slot_save_path:  # the server joins it and a file name as strings: it must end with a separator
        params.slot_save_path = os.path.join(args.slot_save_path, "")
    return params


def _idle_watch(record_path: Path, idle_s: float) -> None:
    """End this process once no cli-agent has used it for `idle_s` seconds (its record untouched, its lock free)."""
    while True:
        time.sleep(min(5.0, max(0.2, idle_s / 4)))
        record = read_record(record_path)
        if record is None or record.pid != os.getpid():
            os._exit(0)  # forgotten or replaced: no cli-agent will find this server again
        with contextlib.suppress(OSError):
            if time.time() - record_path.stat().st_mtime < idle_s:
                continue
        with open(record_path.parent / "lock", "ab") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a cli-agent is using it
            with contextlib.suppress(OSError):
                record_path.unlink()
            os._exit(0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="local_engine")
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ctx", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--batch-threads", type=int, required=True)
    parser.add_argument("--slot-save-path", default="")
    parser.add_argument("--speculative", choices=SPECULATIVE, default="off")
    parser.add_argument("--keep-record", default="")
    parser.add_argument("--keep-idle-s", type=float, default=0.0)
    args = parser.parse_args(argv)
    try:
        import xllamacpp  # deferred: heavy, and it may not load here (the error below says so)
    except Exception as exc:  # an ImportError, or an OSError from the shared library (glibc, CPU)
        print(f"local_engine: the xllamacpp runtime does not load here ({type(exc).__name__}: {exc})", flush=True)
        return 3
    try:
        server = xllamacpp.Server(_params(args))
    except Exception as exc:
        print(f"local_engine: the server did not start ({exc})", flush=True)
        return 1
    print(f"local_engine: listening on {server.listening_address}", flush=True)
    if args.keep_record:
        threading.Thread(target=_idle_watch, args=(Path(args.keep_record), args.keep_idle_s), daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        signal.pause()


if __name__ == "__main__":
    sys.exit(main())
