"""The one resident worker for every implementation plugin (docs/resident-protocol.md):

    python3 -m adapters.worker --impl NAME --socket PATH                                  (dp 1)
    python3 -m torch.distributed.run --standalone --nproc-per-node DP -m adapters.worker --impl NAME --socket PATH

Loads plugin NAME (adapters/plugins.py), starts the process group once (gloo on CPU, NCCL with
MUONCHECK_DEVICE=cuda), says hello with the plugin's space and fixes, then answers map,
from_scenario and scenario requests until the socket ends. A plugin that cannot be loaded or
declares a malformed space says so in its hello (`error`) and the worker exits 1.
"""
import argparse
import gc
import json
import os
import socket
import sys

if __package__ in (None, ""):   # run as a file: import the package from the checkout
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "adapters"

from . import plugins, space  # noqa: E402
from .plugin import PluginError, Unsupported  # noqa: E402

PROTOCOL = "muoncheck-resident/2"


def _send_error_hello(socket_path, name, message):
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(socket_path)
    conn.sendall((json.dumps({"hello": PROTOCOL, "protocol": PROTOCOL, "implementation": name,
                              "error": message}) + "\n").encode())
    conn.close()


def hello(plugin, world_size, device):
    fixes = plugin.fixes()
    return {"protocol": PROTOCOL, "implementation": plugin.name, "name": plugin.title, "version": plugin.version(),
            "world_size": world_size, "device": device, "shape": plugin.shape, "space": plugin.space(),
            "fixes": sorted(fixes)}


def answer(plugin, request):
    """One request's answer (rank 0's is sent; every rank runs a scenario request)."""
    from . import case
    if "map" in request:
        try:
            m = request["map"]
            return {"scenario": plugin.to_scenario(m.get("config") or {}, m["scenario"])}
        except Unsupported as e:
            return {"declined": case.decline_text(e.knob, e.reason), "knob": e.knob}
        except Exception as e:   # a plugin's mapping that raises: the case's ERROR, named
            return {"error": f"plugin {plugin.name!r}: to_scenario: {type(e).__name__}: {e}"}
    if "from_scenario" in request:
        try:
            return {"config": space.full_config(plugin, plugin.from_scenario(request["from_scenario"]))}
        except Unsupported as e:
            return {"declined": case.decline_text(e.knob, e.reason), "knob": e.knob}
        except Exception as e:
            return {"error": f"plugin {plugin.name!r}: from_scenario: {type(e).__name__}: {e}"}
    if "declines" in request:
        try:
            d = request["declines"]
            decline = case.declines(plugin, d["scenario"], d.get("config") or {})
            return {"declined": case.decline_text(decline.knob, decline.reason), "knob": decline.knob} if decline \
                else {"runnable": {}}
        except Unsupported as e:
            return {"declined": case.decline_text(e.knob, e.reason), "knob": e.knob}
        except Exception as e:
            return {"error": f"plugin {plugin.name!r}: declines: {type(e).__name__}: {e}"}
    return case.run(plugin, request["scenario"], request.get("config"), request.get("fixes") or (),
                    int(request.get("repeat", 0)))


def init_process_group(device, plugin=None):
    import torch
    import torch.distributed as dist
    from .common import ranks
    for key, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                       ("MASTER_PORT", os.environ.get("MUONCHECK_PORT", "0"))):
        os.environ.setdefault(key, value)
    if device == "cuda":
        torch.cuda.set_device(ranks.local_rank())
    if not dist.is_initialized():
        backend = "nccl" if device == "cuda" else "gloo"
        plugin.init_process_group(backend) if plugin is not None else dist.init_process_group(backend)


def _freezing_after_first_run(respond):
    """`respond`, and once the first scenario has run, the heap's survivors frozen (gc.freeze).
    Implementations force full collections (DeepSpeed: gc.collect in ZeRO-3's defragment and in
    see_memory_usage, several per engine) that scan every object this resident process holds —
    torch's and the implementation's modules, torch._dynamo that the first case imports — at about
    0.3 s each on two cores; frozen, they scan only what later cases create, which is still freed."""
    frozen = False

    def respond_then_freeze(request):
        nonlocal frozen
        out = respond(request)
        if not frozen and "scenario" in request:
            gc.collect()
            gc.freeze()
            frozen = True
        return out
    return respond_then_freeze


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--impl", required=True, help="the plugin's name (adapters/plugins.py lists them)")
    ap.add_argument("--socket", required=True, help="Unix socket muoncheck listens on")
    args = ap.parse_args(argv)
    device = os.environ.get("MUONCHECK_DEVICE", "cpu")
    try:
        plugin = plugins.load(args.impl)
        greeting = hello(plugin, int(os.environ.get("WORLD_SIZE", "1")), device)
    except (PluginError, Exception) as e:
        if int(os.environ.get("RANK", "0")) == 0:
            _send_error_hello(args.socket, args.impl, str(e) if isinstance(e, PluginError)
                              else f"plugin {args.impl!r}: {type(e).__name__}: {e}")
        return 1
    init_process_group(device, plugin)
    from .common import resident
    import torch.distributed as dist
    try:
        return resident.serve(args.socket, greeting, _freezing_after_first_run(lambda request: answer(plugin, request)),
                              protocol=PROTOCOL)
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
