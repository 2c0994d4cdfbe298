#!/usr/bin/env python3
"""SimGrid platforms for a2a's simulated runs: N nodes x Q ranks per node.

Writes NAME.xml (a SimGrid cluster: Q cores per host, an intra-node loopback
link, a network) and NAME.hosts (the smpirun hostfile, "node-i:Q" lines).

  sim/platform.py --preset theta --nodes 16 -o sim/theta-16x64

Presets (per-message software overheads go into smpi/os, smpi/or and
smpi/ois, piecewise "bytes:seconds:seconds-per-byte"; smpi/lat-factor and
smpi/bw-factor are 1, so a link costs exactly its latency and bandwidth):

  local    the 2-core development machine's Open MPI 4.1.4 shared memory,
           measured here with 2 ranks (one per core, not oversubscribed):
           `mpirun -np 2 build/a2a model --collective alltoallv --measure`
           gave alpha = 0.15 us, beta = 9.3e-11 s/B (10.8 GB/s); `a2a tune`
           at P = 2 gave an extra 0.1 us per message posted in a burst.
           Used as the intra-node link of every preset (loopback) and as
           the software overhead per message, split between send and receive.
  theta    Theta-like (ALCF Theta, Cray XC40): 64 ranks per node (KNL),
           Aries dragonfly.  Published Aries figures: about 1.3 us MPI
           ping-pong latency and about 10 GB/s injection bandwidth per node
           (Cray XC series network whitepaper; ALCF Theta machine overview).
           The latency is split over the hops of the dragonfly (host link,
           router links); KNL's slow cores are assumed to triple the software
           overhead per message (0.3 us send and receive).
  polaris  Polaris-like (ALCF Polaris, HPE Apollo 6500 Gen10+): 32 ranks per
           node (AMD EPYC 7543P), HPE Slingshot 11 dragonfly, 200 Gb/s (25 GB/s)
           per NIC, about 2 us MPI latency (HPE Slingshot published figures;
           ALCF Polaris machine overview).  Software overhead as local.

Networks: flat (each node's link to one backbone), fat-tree (two levels) or
dragonfly (one group; chassis / routers / nodes chosen to multiply to N).
"""
import argparse
import os

PRESETS = {
    #          per node   intra (loopback)      network link             overhead per message
    "local":   dict(q=16, lo_lat=0.15e-6, lo_bw=10.8e9, lat=0.15e-6, bw=10.8e9, os=0.05e-6, net="flat"),
    "theta":   dict(q=64, lo_lat=0.15e-6, lo_bw=10.8e9, lat=1.3e-6, bw=10e9, os=0.3e-6, net="dragonfly"),
    "polaris": dict(q=32, lo_lat=0.15e-6, lo_bw=10.8e9, lat=2.0e-6, bw=25e9, os=0.05e-6, net="dragonfly"),
}


def largest_divisor_at_most(n, cap):
    return max(d for d in range(1, min(n, cap) + 1) if n % d == 0)


def dragonfly(n):
    """groups,links;chassis,links;routers,links;nodes with product n (Aries-like shape), in one group:
    SimGrid 3.32 joins two groups by a single link from a single router (its DragonflyZone's own FIXME),
    which would carry all traffic between half the machine and the other half."""
    nodes = largest_divisor_at_most(n, 4)
    rest = n // nodes
    routers = largest_divisor_at_most(rest, 16)
    chassis = rest // routers
    return f"1,1;{chassis},1;{routers},1;{nodes}", 4  # node, router, router, node links


def fat_tree(n):
    down = largest_divisor_at_most(n, 16)
    return f"2;{down},{n // down};1,{n // down};1,1", 4


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="local")
    ap.add_argument("--nodes", type=int, required=True, help="number of nodes N")
    ap.add_argument("--per-node", type=int, help="ranks per node Q (default: the preset's)")
    ap.add_argument("--network", choices=["flat", "fat-tree", "dragonfly"], help="default: the preset's")
    ap.add_argument("-o", "--output", required=True, help="path without extension")
    a = ap.parse_args()
    p = PRESETS[a.preset]
    q = a.per_node or p["q"]
    net = a.network or p["net"]
    n = a.nodes
    if net == "flat" or n == 1:
        topo, hops = "", 3  # node link, backbone, node link
    elif net == "fat-tree":
        (params, hops) = fat_tree(n)
        topo = f' topology="FAT_TREE" topo_parameters="{params}"'
    else:
        (params, hops) = dragonfly(n)
        topo = f' topology="DRAGONFLY" topo_parameters="{params}"'
    lat = p["lat"] / hops  # end-to-end latency spread over the hops
    backbone = f' bb_bw="{p["bw"] * n:.6g}Bps" bb_lat="{lat:.6g}s"' if not topo else ""
    os_ = p["os"]
    xml = f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- {a.preset}-like: {n} nodes x {q} ranks, {net} network; made by
     sim/platform.py --preset {a.preset} --nodes {n} --per-node {q} --network {net} -->
<platform version="4.1">
  <config>
    <prop id="smpi/os" value="0:{os_:.6g}:0"/>
    <prop id="smpi/or" value="0:{os_:.6g}:0"/>
    <prop id="smpi/ois" value="0:{os_:.6g}:0"/>
    <prop id="smpi/lat-factor" value="0:1"/>
    <prop id="smpi/bw-factor" value="0:1"/>
  </config>
  <cluster id="{a.preset}" prefix="node-" suffix="" radical="0-{n - 1}" speed="1Gf" core="{q}"
           bw="{p["bw"]:.6g}Bps" lat="{lat:.6g}s" loopback_bw="{p["lo_bw"]:.6g}Bps" loopback_lat="{p["lo_lat"]:.6g}s"{backbone}{topo}/>
</platform>
"""
    os.makedirs(os.path.dirname(os.path.abspath(a.output)), exist_ok=True)
    with open(a.output + ".xml", "w") as f:
        f.write(xml)
    with open(a.output + ".hosts", "w") as f:
        f.writelines(f"node-{i}:{q}\n" for i in range(n))
    print(f"{a.output}.xml {a.output}.hosts: {n} x {q} = {n * q} ranks, {net}")


if __name__ == "__main__":
    main()
