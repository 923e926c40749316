#!/bin/bash
# The libvmaf host-ISA dependence survey behind docs/FIDELITY.md: the oracle's libvmaf run on the
# same generated clips as each of its kernel families, every printed value compared.
# Variants: avx512 = native (host EPYC, AVX-512 F/DQ/CD/BW/VL)
#           avx2   = qemu-x86_64 -cpu Haswell-v4  (AVX2+FMA, no AVX-512)
#           c      = qemu-x86_64 -cpu Westmere    (SSE4.2, no AVX => plain C kernels)
#           avx512b = native again (run-to-run determinism control)
# Usage: ./run.sh [gen|jobs|exec|compare|all]   (default all)
set -u
here=$(cd "$(dirname "$0")" && pwd)
D=${SURVEY_DIR:-$here/../../build/libvmaf-survey}     # clips, logs and tables (git-ignored)
F=${ORACLE:-$("$here/../oracle.sh")}
mkdir -p "$D"; D=$(cd "$D" && pwd)
CL=$D/clips; LG=$D/logs
PAR=${PAR:-2}
mkdir -p $CL $LG/avx512 $LG/avx512b $LG/avx2 $LG/c
step=${1:-all}

gen_one() { # w h bd frames -> ref + dis_noise + dis_blur
  local w=$1 h=$2 bd=$3 n=$4 pf=yuv420p ex=""
  [ $bd = 10 ] && { pf=yuv420p10le; ex="-strict -1"; }
  [ $bd = 12 ] && { pf=yuv420p12le; ex="-strict -1"; }
  local b=$CL/${w}x${h}_${bd}_${n}
  [ -s ${b}_ref.y4m ] && return
  local hw=$(( (w+1)/2 )) hh=$(( (h+1)/2 ))
  # testsrc2 only makes even sizes: render even-rounded-up and crop exactly (odd sizes stay odd)
  local ew=$(( (w+1)/2*2 )) eh=$(( (h+1)/2*2 ))
  nice -n 10 $F -nostdin -hide_banner -loglevel error -y -f lavfi -i testsrc2=s=${ew}x${eh}:r=25 -frames:v $n -vf crop=${w}:${h}:0:0:exact=1 -pix_fmt $pf $ex ${b}_ref.y4m
  head -c 40 ${b}_ref.y4m | grep -q "W$w H$h " || echo "BAD SIZE ${b}" >&2
  nice -n 10 $F -nostdin -hide_banner -loglevel error -y -i ${b}_ref.y4m -vf noise=alls=18:allf=t+u -pix_fmt $pf $ex ${b}_noise.y4m
  nice -n 10 $F -nostdin -hide_banner -loglevel error -y -i ${b}_ref.y4m -vf scale=${hw}:${hh},scale=${w}:${h}:flags=bicubic,setsar=1 -pix_fmt $pf $ex ${b}_blur.y4m
}

# ---------------- case lists ----------------
# part 1: default model (integer vif/adm/motion + vmaf)
P1_MAIN="64 65 66 128 129 130 193 194 256 257 258 320 321 322 383 385 386 449 450 513 514 176 352 480 720"
P1_SWEEP=$(seq 32 1 600)              # every width 32..600, h=36, 4 frames, noise only
P1_TINYW=$(seq 17 31)                 # tiny widths at h=36 (w<=16 segfaults libvmaf)
P1_TINYH=$(seq 17 35)                 # tiny heights at w=64
P1_ODDH="176x49 321x67 130x97 258x33 514x75 65x99 720x57 1280x41 1920x37"
# part 2: all float/other features + the 3 models
P2_SIZES="321x243 352x288 257x217 640x96 514x220 1280x100 720x481"
P2_FEATS="psnr psnr_hvs float_ssim float_ms_ssim ciede cambi speed_chroma speed_temporal float_vif float_adm float_motion float_psnr float_ansnr float_moment"
P2_MODELS="vmaf_v0.6.1 vmaf_v1.0.16_3d0h vmaf_float_v0.6.1"

if [ $step = gen ] || [ $step = all ]; then
  for bd in 8 10; do
    for w in $P1_MAIN; do for h in 48 100; do gen_one $w $h $bd 6; done; done
    for w in $P1_SWEEP; do gen_one $w 36 $bd 4; done
    for s in $P1_ODDH; do gen_one ${s%x*} ${s#*x} $bd 6; done
    for w in $P1_TINYW; do gen_one $w 36 $bd 4; done
    for h in $P1_TINYH; do gen_one 64 $h $bd 4; done
    for s in $P2_SIZES; do gen_one ${s%x*} ${s#*x} $bd 5; done
  done
  for w in 130 258 514 321; do gen_one $w 48 12 6; done   # a few 12-bit
fi

# job lines: "<tag> <dis> <ref> <libvmaf-options>"
if [ $step = jobs ] || [ $step = all ]; then
  J=$D/jobs.txt.new; : > $J
  m="model=version=vmaf_v0.6.1"
  for bd in 8 10; do
    for w in $P1_MAIN; do for h in 48 100; do b=${w}x${h}_${bd}_6
      for d in noise blur; do echo "p1_${b}_$d $CL/${b}_$d.y4m $CL/${b}_ref.y4m $m" >> $J; done; done; done
    for w in $P1_SWEEP; do b=${w}x36_${bd}_4; echo "sw_${b}_noise $CL/${b}_noise.y4m $CL/${b}_ref.y4m $m" >> $J; done
    for s in $P1_ODDH; do b=${s}_${bd}_6
      for d in noise blur; do echo "oh_${b}_$d $CL/${b}_$d.y4m $CL/${b}_ref.y4m $m" >> $J; done; done
    for s in $P2_SIZES; do b=${s}_${bd}_5
      for d in noise blur; do
        for f in $P2_FEATS; do echo "f_${f}_${b}_$d $CL/${b}_$d.y4m $CL/${b}_ref.y4m feature=name=$f" >> $J; done
        for mm in $P2_MODELS; do echo "m_${mm}_${b}_$d $CL/${b}_$d.y4m $CL/${b}_ref.y4m model=version=$mm" >> $J; done
      done; done
  done
  for w in 130 258 514 321; do b=${w}x48_12_6
    for d in noise blur; do echo "p1_${b}_$d $CL/${b}_$d.y4m $CL/${b}_ref.y4m $m" >> $J; done; done
  for bd in 8 10; do
    for w in $P1_TINYW; do b=${w}x36_${bd}_4; echo "sw_${b}_noise $CL/${b}_noise.y4m $CL/${b}_ref.y4m $m" >> $J; done
    for h in $P1_TINYH; do b=64x${h}_${bd}_4; echo "sw_${b}_noise $CL/${b}_noise.y4m $CL/${b}_ref.y4m $m" >> $J; done
  done
  mv $J $D/jobs.txt   # atomic replace (a running exec keeps reading the old file)
  wc -l $D/jobs.txt
fi

run_job() { # variant tag dis ref opts
  local v=$1 tag=$2 dis=$3 ref=$4 opts=$5 pre=""
  local out=$LG/$v/$tag.json
  [ -s $out ] && return 0
  case $v in avx512b) pre="";; avx2) pre="qemu-x86_64 -cpu Haswell-v4,-pcid,-x2apic,-tsc-deadline,-invpcid,-spec-ctrl";; c) pre="qemu-x86_64 -cpu Westmere,-x2apic,-tsc-deadline";; esac
  nice -n 10 $pre $F -nostdin -hide_banner -loglevel error -i $dis -i $ref \
    -lavfi "libvmaf=log_fmt=json:log_path=$out.tmp$$:n_threads=1:$opts" -f null - 2>&1 \
    | grep -v "TCG doesn't support" > $LG/$v/$tag.err
  [ -s $out.tmp$$ ] && mv $out.tmp$$ $out; rm -f $out.tmp$$
  return 0
}
export -f run_job; export F LG

if [ $step = exec ] || [ $step = all ]; then
  for pass in 1 2; do   # 2nd pass re-runs anything that failed transiently (runs with a JSON are skipped)
  for v in avx512 avx512b avx2 c; do   # avx512b = native repeat (determinism control)
    sed "s/^/$v /" $D/jobs.txt
  done | xargs -P $PAR -L 1 bash -c 'run_job "$@"' _
  done
fi

if [ $step = compare ] || [ $step = all ]; then
  SURVEY_DIR=$D python3 $here/compare.py > $D/compare_out.txt      # per-metric diff tables + width-rule check
  (cd $D && python3 $here/bugstats.py > $D/bugstats_out.txt)   # max |diff| per integer-ADM width class
  cat $D/compare_out.txt $D/bugstats_out.txt
fi
