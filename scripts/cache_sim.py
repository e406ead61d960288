#!/usr/bin/env python3
"""Block-cache policies on the peer benchmark's hit probes (docs/performance.md, item 21).

Usage: scripts/cache_sim.py WORKLOAD.bin [--blocks 25642] [--cache-blocks 16384]

Maps each hit probe of the workload (shared/bench WORKLOAD.md) to its data block (key index
x blocks / N: 39 entries per 4 KB block at N = 1M) and counts the block-cache misses of
three passes over the probes (the benchmark's cold pass, its warm pass, one more) for:
LRU (LevelDB's policy), CLOCK with TinyLFU admission (the crate's: reference counts up to 3,
a count-min sketch of 4-bit counters halved every 10 x capacity uses, a new block admitted
only if its estimate beats the CLOCK victim's), and the static bound (the cache-blocks
blocks probed most often, which no online policy reaches). Then the same two policies when
the second pass is not a repeat of the first: fresh uniform probes, and Zipf-skewed probes
(exponents 0.8 and 0.99 over the keys in a random order; 200,000 to warm up, 200,000
counted). Standard library only; about a minute at N = 1M.
"""
import argparse
import bisect
import collections
import itertools
import random
import struct


def hit_blocks(path, blocks):
    data = open(path, "rb").read()
    p = data.index(b"\n") + 1

    def u32():
        nonlocal p
        v = struct.unpack_from("<I", data, p)[0]
        p += 4
        return v

    n = u32()
    keys = {}
    for i in range(n):
        kl = u32()
        keys[data[p:p + kl]] = i
        p += kl
        vl = u32()
        p += vl
    out = []
    for _ in range(u32()):
        kl = u32()
        out.append(keys[data[p:p + kl]] * blocks // n)
        p += kl
        vl = u32()
        p += vl
    return out


def lru(seq, cap, passes=3):
    od, res = collections.OrderedDict(), []
    for _ in range(passes):
        miss = 0
        for b in seq:
            if b in od:
                od.move_to_end(b)
            else:
                miss += 1
                od[b] = True
                if len(od) > cap:
                    od.popitem(last=False)
        res.append(miss)
    return res


class Sketch:
    def __init__(self, items):
        self.w = 1
        while self.w < items:
            self.w *= 2
        self.t = [0] * (self.w * 16)  # 16 four-bit counters per 64-bit word
        self.adds, self.sample = 0, 10 * items

    def idx(self, k):
        h = (k * 0x9E3779B97F4A7C15) & (2**64 - 1)
        h ^= h >> 31
        block = (h % (self.w // 8)) * 8
        hi = h >> 32
        return [(block + 2 * i + ((hi >> (8 * i)) & 1)) * 16 + ((hi >> (8 * i + 1)) & 15) for i in range(4)]

    def inc(self, k):
        for i in self.idx(k):
            if self.t[i] < 15:
                self.t[i] += 1
        self.adds += 1
        if self.adds >= self.sample:
            self.t = [v // 2 for v in self.t]
            self.adds = self.sample // 2

    def est(self, k):
        return min(self.t[i] for i in self.idx(k))


def clock_tinylfu(seq, cap, passes=3, max_ref=3):
    sk, ring, pos, ref, hand, res = Sketch(cap), [], {}, [], 0, []
    for _ in range(passes):
        miss = 0
        for b in seq:
            sk.inc(b)
            if b in pos:
                i = pos[b]
                ref[i] = min(ref[i] + 1, max_ref)
                continue
            miss += 1
            if len(ring) < cap:
                pos[b] = len(ring)
                ring.append(b)
                ref.append(0)
                continue
            while ref[hand] > 0:
                ref[hand] -= 1
                hand = (hand + 1) % cap
            victim = ring[hand]
            if sk.est(b) > sk.est(victim):
                del pos[victim]
                ring[hand], pos[b], ref[hand] = b, hand, 0
                hand = (hand + 1) % cap
        res.append(miss)
    return res


def second_half_misses(policy, first, second, cap):
    """Misses of `policy` (`lru` or `clock_tinylfu`) during `second`, after `first`."""
    warm = policy(first, cap, passes=1)[0]
    return policy(first + second, cap, passes=1)[0] - warm


def zipf_blocks(n_keys, blocks, count, s, rng):
    w = itertools.accumulate(1.0 / (r + 1) ** s for r in range(n_keys))
    cum = list(w)
    perm = list(range(n_keys))
    rng.shuffle(perm)
    return [perm[bisect.bisect_left(cum, rng.random() * cum[-1])] * blocks // n_keys
            for _ in range(count)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--blocks", type=int, default=25642)
    ap.add_argument("--cache-blocks", type=int, default=16384)
    a = ap.parse_args()
    seq = hit_blocks(a.workload, a.blocks)
    cap = a.cache_blocks
    top = {b for b, _ in collections.Counter(seq).most_common(cap)}
    print(f"{len(seq)} probes over {a.blocks} blocks, cache of {cap} blocks; misses per pass")
    print("LRU (LevelDB)            ", lru(seq, cap))
    print("CLOCK + TinyLFU (crate)  ", clock_tinylfu(seq, cap))
    print("static bound (per pass)  ", sum(1 for b in seq if b not in top))
    rng = random.Random(7)
    n_keys = 1_000_000
    fresh = [rng.randrange(n_keys) * a.blocks // n_keys for _ in range(len(seq))]
    print("second pass of fresh uniform probes after the workload's: LRU",
          second_half_misses(lru, seq, fresh, cap), " CLOCK + TinyLFU",
          second_half_misses(clock_tinylfu, seq, fresh, cap))
    for s in (0.8, 0.99):
        z = zipf_blocks(n_keys, a.blocks, 2 * len(seq), s, random.Random(11))
        first, second = z[:len(seq)], z[len(seq):]
        print(f"Zipf {s}, fresh probes after as many to warm up: LRU",
              second_half_misses(lru, first, second, cap), " CLOCK + TinyLFU",
              second_half_misses(clock_tinylfu, first, second, cap))


if __name__ == "__main__":
    main()
