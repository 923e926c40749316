#!/usr/bin/env python3
"""Max |diff| per integer-ADM bug class (default-model runs p1/sw/oh), from the JSON logs."""
import json, re, collections
rx = re.compile(r'^(p1|sw|oh)_(\d+)x(\d+)_(\d+)_(\d+)_(noise|blur)$')
M = ['integer_adm2','integer_adm3','integer_aim','integer_adm_scale0','integer_adm_scale1','integer_adm_scale2','integer_adm_scale3','vmaf']
def cls(w, bd):
    h1 = (w + 1) // 2 - 1
    if 17 <= w <= 32: return 'A: w 17-32 (adm_cm_avx512 UB cast)'
    if bd == 8 and h1 % 32 == 0: return 'B: 8-bit (ceil(w/2)-1)%32==0 (dwt2_8_avx512)'
    if bd > 8 and h1 % 64 == 0: return 'C: >8-bit (ceil(w/2)-1)%64==0 (dwt2_16_avx512 AND dwt2_16_avx2)'
    if bd > 8 and h1 % 16 == 0: return 'D: >8-bit (ceil(w/2)-1)%16==0, not %64 (dwt2_16_avx2)'
    return 'E: other widths'
mx = collections.defaultdict(float); n = collections.Counter()
for l in open('jobs.txt'):
    t = l.split()[0]; m = rx.match(t)
    if not m: continue
    w, bd = int(m.group(2)), int(m.group(4)); c = cls(w, bd); n[c] += 1
    L = {v: json.load(open(f'logs/{v}/{t}.json')) for v in ('avx512', 'avx2', 'c')}
    for a, b in (('avx512','avx2'), ('avx512','c'), ('avx2','c')):
        for fa, fb in zip(L[a]['frames'], L[b]['frames']):
            for k in M: mx[(c, a+' vs '+b, k)] = max(mx[(c, a+' vs '+b, k)], abs(fa['metrics'][k]-fb['metrics'][k]))
print('| width class | cases | pair | ' + ' | '.join(k.replace('integer_','') for k in M) + ' |')
print('|---|---|---|' + '---|'*len(M))
for c in sorted(n):
    for p in ('avx512 vs avx2', 'avx512 vs c', 'avx2 vs c'):
        print(f'| {c} | {n[c]} | {p} | ' + ' | '.join(f'{mx[(c,p,k)]:.3g}' for k in M) + ' |')
