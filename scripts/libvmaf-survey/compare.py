#!/usr/bin/env python3
"""Compare libvmaf JSON logs (values as printed, %.6f) across CPU variants.
avx512 = native, avx512b = native repeat (determinism control), avx2 = qemu Haswell-v4, c = qemu Westmere."""
import json, os, re, collections
D = os.environ.get('SURVEY_DIR', 'build/libvmaf-survey'); LG = D + '/logs'
V = ['avx512', 'avx512b', 'avx2', 'c']
PAIRS = [('avx512', 'avx512b'), ('avx512', 'avx2'), ('avx512', 'c'), ('avx2', 'c')]
rx = re.compile(r'^(p1|sw|oh|f|m)_(?:(.+?)_)?(\d+)x(\d+)_(\d+)_(\d+)_(noise|blur)$')

def load(v, tag):
    p = f'{LG}/{v}/{tag}.json'
    if not os.path.exists(p): return None
    d = json.load(open(p), parse_float=str)
    fr = {(f['frameNum'], k): s for f in d['frames'] for k, s in f['metrics'].items()}
    po = {(st, k): s for k, dd in d.get('pooled_metrics', {}).items() for st, s in dd.items()}
    return fr, po

def mkey(kind, name, mt):
    if mt == 'vmaf': return 'vmaf[' + (name if kind == 'm' else 'vmaf_v0.6.1') + ']'
    return mt

tags = [l.split()[0] for l in open(D + '/jobs.txt')]
stats = collections.defaultdict(lambda: collections.defaultdict(lambda: {'n': 0, 'fd': 0.0, 'pd': 0.0, 'nfr': 0, 'where': []}))
ncases = collections.Counter(); cov = collections.defaultdict(set)
missing = []
for t in tags:
    kind, name, w, h, bd, nf, dist = rx.match(t).groups()
    w, h, bd = int(w), int(h), int(bd)
    L = {v: load(v, t) for v in V}
    if any(x is None for x in L.values()): missing.append((t, [v for v in V if L[v] is None]))
    if L['avx512'] is None: continue
    for mt in set(k[1] for k in L['avx512'][0]):
        if all(L[v] is not None for v in V):
            ncases[mkey(kind, name, mt)] += 1; cov[mkey(kind, name, mt)].add((bd, w))
    for a, b in PAIRS:
        if L[a] is None or L[b] is None or not all(L[v] is not None for v in V): continue
        (fa, pa), (fb, pb) = L[a], L[b]
        per = collections.defaultdict(lambda: [0.0, 0.0, 0])
        for src_a, src_b, idx in ((fa, fb, 0), (pa, pb, 1)):
            for k in set(src_a) | set(src_b):
                x, y = src_a.get(k), src_b.get(k)
                if x != y:
                    dd = abs(float(x) - float(y)) if x is not None and y is not None else float('inf')
                    e = per[k[1]]; e[idx] = max(e[idx], dd)
                    if idx == 0: e[2] += 1
        for mt, (fd, pd, nfr) in per.items():
            s = stats[mkey(kind, name, mt)][(a, b)]
            s['n'] += 1; s['fd'] = max(s['fd'], fd); s['pd'] = max(s['pd'], pd); s['nfr'] += nfr
            s['where'].append((w, h, bd, dist, kind))

def ranges(ws):
    ws = sorted(ws); out = []; i = 0
    while i < len(ws):
        j = i
        while j + 1 < len(ws) and ws[j + 1] == ws[j] + 1: j += 1
        out.append(f'{ws[i]}-{ws[j]}' if j > i + 1 else ','.join(map(str, ws[i:j + 1])))
        i = j + 1
    return ','.join(out)

def fmt_where(wh):
    byb = collections.defaultdict(set)
    for w, h, bd, dist, kind in wh: byb[bd].add(w)
    return '; '.join(f'{bd}-bit: {ranges(ws)}' for bd, ws in sorted(byb.items()))

print('## Runs missing for some variant (libvmaf error/crash, same on all variants unless noted)')
byv = collections.Counter(tuple(vs) for t, vs in missing)
for t, vs in missing: print(f'- {t}: missing {",".join(vs)}')
print()
print('## Metrics that differ between variants (printed values)')
print('| metric | pair | cases differing / compared | frames differing | max abs diff (per-frame) | max abs diff (pooled) | widths where it differed |')
print('|---|---|---|---|---|---|---|')
for mt in sorted(stats):
    for pr in PAIRS:
        if pr not in stats[mt]: continue
        s = stats[mt][pr]
        print(f'| {mt} | {pr[0]} vs {pr[1]} | {s["n"]}/{ncases[mt]} | {s["nfr"]} | {s["fd"]:.6g} | {s["pd"]:.6g} | {fmt_where(s["where"])} |')
print()
print('## Metrics identical (every frame + pooled) across all variants in every case compared')
for mt in sorted(ncases):
    if mt not in stats:
        byb = collections.defaultdict(set)
        for bd, w in cov[mt]: byb[bd].add(w)
        print(f'- {mt}: {ncases[mt]} cases; ' + '; '.join(f'{bd}-bit {len(ws)} widths' for bd, ws in sorted(byb.items())))
print()
# ---- width-rule check for integer ADM ----
ADM = {'integer_adm2', 'integer_adm3', 'integer_aim', 'integer_adm_scale0', 'integer_adm_scale1', 'integer_adm_scale2', 'integer_adm_scale3', 'vmaf[vmaf_v0.6.1]'}
obs = collections.defaultdict(set)
for mt in ADM:
    for pr, s in stats.get(mt, {}).items():
        for w, h, bd, dist, kind in s['where']: obs[(pr, bd)].add(w)
tested = collections.defaultdict(set)
for bd, w in cov['integer_adm2']: tested[bd].add(w)
def half1(w): return (w + 1) // 2 - 1
rules = {
    (('avx512', 'avx2'), 8):  lambda w: half1(w) % 32 == 0 or 17 <= w <= 32,
    (('avx512', 'c'), 8):     lambda w: half1(w) % 32 == 0 or 17 <= w <= 32,
    (('avx2', 'c'), 8):       lambda w: False,
    (('avx512', 'avx2'), 10): lambda w: (half1(w) % 16 == 0 and half1(w) % 64 != 0) or 17 <= w <= 32,
    (('avx512', 'c'), 10):    lambda w: half1(w) % 64 == 0 or 17 <= w <= 32,
    (('avx2', 'c'), 10):      lambda w: half1(w) % 16 == 0,
}
rules.update({(k[0], 12): v for k, v in rules.items() if k[1] == 10})
print('## Integer-ADM width rule check (any integer_adm*/aim/vmaf differing, any height/distortion)')
print('| pair | bitdepth | widths tested | observed differing | predicted by rule | observed-not-predicted | predicted-not-observed |')
print('|---|---|---|---|---|---|---|')
for (pr, bd), f in sorted(rules.items(), key=lambda x: (x[0][1], x[0][0])):
    T = tested[bd]; O = obs[(pr, bd)] & T; P = {w for w in T if f(w)}
    print(f'| {pr[0]} vs {pr[1]} | {bd} | {len(T)} | {len(O)} | {len(P)} | {ranges(O - P) or "-"} | {ranges(P - O) or "-"} |')
with open(D + '/diff_cases.txt', 'w') as fo:
    for mt in sorted(stats):
        for pr, s in stats[mt].items():
            for w, h, bd, dist, kind in s['where']: fo.write(f'{mt}\t{pr[0]}-{pr[1]}\t{kind}\t{w}x{h}\t{bd}\t{dist}\n')
