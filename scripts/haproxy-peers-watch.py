#!/usr/bin/env python3
"""Watch the HAProxy processes of a --provider local run of targets/peers/haproxy-peers*.yaml
(docs/zones.md#haproxys-peers-through-zones-the-last-push-wins).

  scripts/haproxy-peers-watch.py SECONDS OUT.jsonl   # beside a bin/harness loadtest run
  scripts/haproxy-peers-watch.py --summary OUT.jsonl [CLIENT]

Once a second, for at most SECONDS (600 at most), each node of the newest run's fleet is asked
through its runtime API (the stats socket in its directory) for `show peers` (every peer
session's state, connections and protocol errors) and `show table rl/clients` (entries over
100), and node-0 times a peer handshake (HAProxyS 2.1 to a peer name the node does not have,
which it answers with 503 at once) to node-7 three times along node-0's own peer line (through
the link between the zones, when node-7 is in another zone) and three times directly, and to
node-1 directly. 127.0.0.1 and unix sockets only. --summary prints what a file holds: the
sessions' states, the connections each peer made, the handshake times, and CLIENT's count on
every node at its peak (probe-sync90 by default)."""
import glob, json, os, re, socket, sys, time


def cli(sock, cmd):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(2)
    try:
        s.connect(sock)
        s.sendall((cmd + "\n").encode())
        buf = b""
        while True:
            b = s.recv(65536)
            if not b:
                return buf.decode(errors="replace")
            buf += b
    except OSError as e:
        return "ERR %s" % e
    finally:
        s.close()


def handshake(addr):
    host, port = addr.rsplit(":", 1)
    if host != "127.0.0.1":
        return None
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect((host, int(port)))
        t0 = time.perf_counter()
        s.sendall(b"HAProxyS 2.1\nnobody\nwatch 1 1\n")
        if not s.recv(64):
            return None
        return round((time.perf_counter() - t0) * 1000, 3)
    except OSError:
        return None
    finally:
        s.close()


def fleet():
    """The newest run's nodes: name -> (socket, {peer: address})."""
    runs = {}
    for sock in glob.glob("/tmp/rlharness-*/*/haproxy.sock"):
        runs.setdefault(sock.split("/")[2], []).append(sock)
    if not runs:
        return {}
    newest = max(runs, key=lambda r: os.path.getmtime("/tmp/" + r))
    nodes = {}
    for sock in runs[newest]:
        cfg = open(os.path.join(os.path.dirname(sock), "haproxy.cfg")).read()
        name = re.search(r"localpeer (\S+)", cfg).group(1)
        nodes[name] = (sock, dict(re.findall(r"^\s*peer (\S+) (\S+)", cfg, re.M)))
    return nodes


def watch(seconds, out):
    deadline = time.time() + min(seconds, 600)
    with open(out, "w") as f:
        while time.time() < deadline:
            nodes = fleet()
            if len(nodes) < 2:
                time.sleep(0.5)
                continue
            rec = {"t": time.time(), "nodes": {}}
            for name, (sock, _) in sorted(nodes.items()):
                peers = re.findall(r"id=(\S+)\((\w+),\w+\) addr=\S+ last_status=(\S+).*?new_conn=(\d+) proto_err=(\d+)", cli(sock, "show peers"), re.S)
                table = re.findall(r"key=(\S+) .*?_rate\(\d+\)=(\d+)", cli(sock, "show table rl/clients data.http_req_rate gt 100"))
                rec["nodes"][name] = {"peers": [p for p in peers if p[1] == "remote"], "table": dict(table)}
            lines = {n: p for n, (_, p) in nodes.items()}
            if "node-0" in lines and "node-7" in lines:
                rec["via"] = [handshake(lines["node-0"]["node-7"]) for _ in range(3)]
                rec["direct"] = [handshake(lines["node-7"]["node-7"]) for _ in range(3)]
                rec["near"] = [handshake(lines["node-0"]["node-1"]) for _ in range(3)]
            f.write(json.dumps(rec) + "\n")
            f.flush()
            time.sleep(1)


def summary(path, client):
    recs = [json.loads(l) for l in open(path)]
    print("%d samples over %.0f s" % (len(recs), recs[-1]["t"] - recs[0]["t"]))
    states, conns, errs = {}, {}, 0
    for r in recs:
        for n, v in r["nodes"].items():
            for peer, _, status, new_conn, proto_err in v["peers"]:
                states[status] = states.get(status, 0) + 1
                conns[(n, peer)] = max(conns.get((n, peer), 0), int(new_conn))
                errs = max(errs, int(proto_err))
    print("peer sessions' states over every sample:", states)
    print("connections a peer session took, most: %d (of %d sessions); protocol errors, most: %d"
          % (max(conns.values()), len(conns), errs))
    for k, name in (("via", "node-0 to node-7 along node-0's peer line"), ("direct", "to node-7 directly"), ("near", "node-0 to node-1 directly")):
        xs = sorted(x for r in recs for x in r.get(k, []) if x is not None)
        if xs:
            print("handshake %-42s n=%d p50 %.2f ms p90 %.2f ms max %.2f ms"
                  % (name, len(xs), xs[len(xs) // 2], xs[int(len(xs) * 0.9)], xs[-1]))
    peak = max(recs, key=lambda r: max([int(v["table"].get(client, 0)) for v in r["nodes"].values()]))
    print("%s's count on every node at its peak:" % client,
          " ".join("%s=%s" % (n, v["table"].get(client, "-")) for n, v in sorted(peak["nodes"].items())))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--summary":
        summary(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "probe-sync90")
    elif len(sys.argv) == 3:
        watch(float(sys.argv[1]), sys.argv[2])
    else:
        sys.exit(__doc__)
