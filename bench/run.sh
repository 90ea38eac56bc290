#!/usr/bin/env bash
# skillc benchmark: generates 10k / 100k / 1M-experience corpora with `skillc gen` and reports, per
# size, the median wall time of a full compile into a fresh output directory (everything written:
# skills, ledger, diagnostics, state store), of the same compile run again on unchanged input (the
# nightly case: nothing to rewrite), experiences per second, peak RSS, the ratio of the full
# compile to a load-only pass (`--stop-after load`), and the load-only pass against a bare typed
# serde_json parse of the same file (the physical floor); each run takes them back to back and
# the ratios are medians of the runs' own ratios. Then the worst case — one block of
# 200 000 near-identical candidates — a byte-identity check at 1 and 2 threads, and `skillc why`
# on the largest corpus. It also prices fresh memory on the machine (`examples/fresh_memory.rs`):
# the full compile touches more memory than the load-only pass and pays that price on the
# difference.
#
#   bench/run.sh                 # all sizes, 3 runs each
#   SIZES="10000 100000" RUNS=5 bench/run.sh
#
# Work files go to bench/out/ (ignored by git). Needs only cargo and /usr/bin/time (GNU time).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"10000 100000 1000000"}
RUNS=${RUNS:-3}
SEED=${SEED:-1}
# The corpora are kept between runs; bump GEN when `skillc gen` changes what it writes, so a
# working copy does not measure an old corpus (2: `in_play` names real lessons; 3: the first
# success on a key settles its failures, so fewer mechanical lessons are in play; 4: em dashes
# in 13% of the texts).
GEN=4
OUT=bench/out
# Fresh output directories are made per run and removed at the end: ext4 skips inodes freed in
# the last few minutes when it makes new files: right after ~14 000 output directories were
# deleted, a profile of the next compile spent about 15 % of its samples there. For the same reason, start the benchmark a
# few minutes after deleting any large output tree (another benchmark's included).
FRESH=$OUT/fresh
rm -rf "$FRESH"
mkdir -p "$OUT" "$FRESH"

cargo build --release --quiet
cargo build --release --quiet --example bare_parse --example fresh_memory
BIN=target/release/skillc
BARE=target/release/examples/bare_parse
FRESH_MEMORY=target/release/examples/fresh_memory
TIME=/usr/bin/time

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Runs a command once; prints "seconds max_rss_kb". The disk is flushed first (untimed): a
# 1 M compile leaves about 0.8 GB of dirty page cache (the state store, the skill files) that
# the kernel writes back some 30 s later, in the middle of the next run, whose file creation
# then waits behind it (the write stage took 0.9-1.5 s after a `sync` and 1.0-6.0 s without,
# back to back). A nightly compile runs alone; this measures that.
once() {
  sync
  "$TIME" -f "%e %M" -o "$OUT/time.txt" "$@" >/dev/null 2>&1
  cat "$OUT/time.txt"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f\n", (b > 0 ? a / b : 0) }'; }

echo "skillc benchmark — $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), runs per figure: $RUNS (median)"
echo
echo "| experiences | file | bare parse | load only | full compile | re-run | exp/s | peak RSS | load / bare | full / load |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
# Each run's own figures, printed under the table: the medians hide how far the machine's pace
# moved between runs.
spreads=()
for n in $SIZES; do
  corpus="$OUT/corpus-g$GEN-s$SEED-$n.jsonl"
  [ -s "$corpus" ] || "$BIN" gen --experiences "$n" --seed "$SEED" --out "$corpus"
  size=$(du -h "$corpus" | cut -f1)
  # Each run times the bare parse, the load-only pass and the full compile back to back, and
  # the ratios are the medians of each run's own ratios: this machine's speed drifts from one
  # minute to the next, and three figures taken minutes apart would measure the drift.
  bares=(); loads=(); fulls=(); reruns=(); lb=(); fl=(); rss=0
  for r in $(seq "$RUNS"); do
    sync # the bare parse, too, starts on a flushed disk (see `once`)
    b=$("$BARE" "$corpus" 2>/dev/null)
    read -r l _ < <(once "$BIN" compile "$corpus" --out "$FRESH/$n-$r" --stop-after load)
    read -r f m < <(once "$BIN" compile "$corpus" --out "$FRESH/$n-$r")
    read -r u m2 < <(once "$BIN" compile "$corpus" --out "$FRESH/$n-$r")
    bares+=("$b"); loads+=("$l"); fulls+=("$f"); reruns+=("$u")
    lb+=("$(ratio "$l" "$b")"); fl+=("$(ratio "$f" "$l")")
    (( m > rss )) && rss=$m
    (( m2 > rss )) && rss=$m2
  done
  bare=$(printf '%s\n' "${bares[@]}" | median)
  load=$(printf '%s\n' "${loads[@]}" | median)
  full=$(printf '%s\n' "${fulls[@]}" | median)
  rerun=$(printf '%s\n' "${reruns[@]}" | median)
  spreads+=("$n experiences, each run: full $(printf '%s s, ' "${fulls[@]}" | sed 's/, $//'); re-run $(printf '%s s, ' "${reruns[@]}" | sed 's/, $//'); load only $(printf '%s s, ' "${loads[@]}" | sed 's/, $//')")
  load_bare=$(printf '%s\n' "${lb[@]}" | median)
  full_load=$(printf '%s\n' "${fl[@]}" | median)
  awk -v n="$n" -v size="$size" -v bare="$bare" -v load="$load" -v full="$full" -v rss="$rss" \
      -v rerun="$rerun" -v lb="$load_bare" -v fl="$full_load" 'BEGIN {
    printf "| %d | %s | %.2f s | %.2f s | %.2f s | %.2f s | %.0f | %.2f GiB | %.2f× | %.2f× |\n",
      n, size, bare, load, full, rerun, n / full, rss / 1048576, lb, fl }'
done

echo
printf '%s\n' "${spreads[@]}"

# The price of memory the process has not touched before (3 GiB, about a 1 M compile's peak),
# taken three times: on a virtual machine it depends on what the guest used a moment ago.
firsts=(); agains=()
for r in 1 2 3; do
  read -r f a < <("$FRESH_MEMORY" 3)
  firsts+=("$f"); agains+=("$a")
done
echo
printf '%s\n' "${firsts[@]}" | sort -g | awk -v again="$(printf '%s\n' "${agains[@]}" | median)" '
  {a[NR]=$1} END { printf "Fresh memory (3 GiB, one thread): first touch %.2f-%.2f s/GiB, touched again %.3f s/GiB\n", a[1], a[NR], again }'

echo
echo "Worst case: one block of 200 000 near-identical candidates"
cargo test --release --quiet --lib cluster::tests::scale_200k -- --ignored --nocapture 2>/dev/null | grep -iE "200|cluster" || true

echo
largest=$(echo "$SIZES" | awk '{print $NF}')
corpus="$OUT/corpus-g$GEN-s$SEED-$largest.jsonl"
"$BIN" compile "$corpus" --out "$FRESH/t1" --threads 1 >/dev/null 2>&1
"$BIN" compile "$corpus" --out "$FRESH/t2" --threads 2 >/dev/null 2>&1
if diff -r -q -x .skillc "$FRESH/t1" "$FRESH/t2" >/dev/null; then
  echo "byte-identical output at 1 and 2 threads ($largest experiences): yes"
else
  echo "byte-identical output at 1 and 2 threads ($largest experiences): NO"; exit 1
fi

# The diagnosis users run on a large corpus: `why` recompiles (without writing) and reports on
# the largest domain.
read -r w m < <(once "$BIN" why python "$corpus")
awk -v n="$largest" -v w="$w" -v m="$m" 'BEGIN {
  printf "skillc why python (%d experiences): %.2f s, peak %.2f GiB\n", n, w, m / 1048576 }'

rm -rf "$FRESH"
