#!/usr/bin/env bash
# The shell step of the composite GitHub Action (action.yml): install betaconform, run one command on the inputs
# with the gate and the outputs asked for, and hand back its exit code. Every input arrives as an environment
# variable (never pasted into the script), so a file name or option cannot inject shell code. Runs the same on a
# laptop: tests/test_action.py runs it locally.
#
#   BC_COMMAND   fit | report | judges | sample | transfer | evaluate | doctor (default fit)
#   BC_FILES     the files, directories or globs to read, separated by newlines or spaces (required)
#   BC_MAX_ERROR the gate's limit, a fraction (fit/report/judges --max-error; another command: exit 2); empty: no gate
#   BC_AT_K      the gate's k (fit/report --at-k; default 5 when BC_MAX_ERROR is set)
#   BC_JUNIT     write a JUnit XML file here (empty: none)
#   BC_HTML      write the HTML report here (empty: none; not sample's: exit 2)
#   BC_ARGS      further options, split on spaces (e.g. "--ks 1,3,5 --seed 1"), before the files' '--'
#   BC_INSTALL   what pip installs (default: the action's own checkout); "none" uses the betaconform on PATH
#   BC_PYTHON    the Python to install into and run with (default python3)
set -uo pipefail

python=${BC_PYTHON:-python3}
command=${BC_COMMAND:-fit}
case "$command" in
  fit|report|judges|sample|transfer|evaluate|doctor|score) ;;
  *) echo "error: unknown command '$command' (fit, report, judges, sample, transfer, evaluate, doctor, score)" >&2; exit 2 ;;
esac
if [ -z "${BC_FILES:-}" ]; then
  echo "error: the action's 'files' input is empty: name the judgment files (or saved fits) to read" >&2
  exit 2
fi

# a path with a line break cannot be an output the workflow reads back ($GITHUB_OUTPUT is line-based)
for name in BC_JUNIT BC_HTML; do
  case "${!name:-}" in
    *$'\n'*|*$'\r'*) echo "error: the action's '$(echo "${name#BC_}" | tr 'A-Z' 'a-z')' input holds a line break; give one file name" >&2; exit 2 ;;
  esac
done
# the options each command has: the gate (--max-error, --at-k) is fit's, report's and judges'; the HTML report is -o
# for every command but sample (whose -o is the next items to label). An input asked for where the command has no
# such option is an error, never dropped: a gate that silently does not run would pass every job.
gate_k=no
case "$command" in
  fit|report) gate=yes; gate_k=yes ;;
  judges) gate=yes ;;
  *) gate=no ;;
esac
if [ -n "${BC_MAX_ERROR:-}" ] && [ "$gate" = no ]; then
  hint=""
  [ "$command" = score ] && hint=" (score's gate is --min-score: put it in 'args')"
  echo "error: the action's 'max-error' input gates fit, report and judges; $command has no --max-error$hint" >&2
  exit 2
fi
if [ -n "${BC_HTML:-}" ] && [ "$command" = sample ]; then
  echo "error: the action's 'html' input: sample writes no HTML report (its -o is the next items to label; put it in 'args')" >&2
  exit 2
fi

args=("$command")
set -f  # the globs in BC_FILES are betaconform's to expand (it reads directories and globs itself)
# shellcheck disable=SC2206  # word splitting on purpose: one file per word or line
files=(${BC_FILES})
# shellcheck disable=SC2206
extra=(${BC_ARGS:-})
set +f

# the light install (no torch) unless the command needs text embeddings (transfer, fit --embed, evaluate
# --transfer: the [embeddings] extra, with CPU torch on Linux) or figures (evaluate --plot: the [plot] extra)
extras=()
[ "$command" = transfer ] && extras+=(embeddings)
for a in "${extra[@]}"; do
  case "$command:$a" in
    fit:--embed|evaluate:--transfer) extras+=(embeddings) ;;
    evaluate:--plot|evaluate:--plot=*) extras+=(plot) ;;
  esac
done
install=${BC_INSTALL:-$(cd "$(dirname "$0")/.." && pwd)}
if [ "$install" != "none" ]; then
  spec=$install
  if [ ${#extras[@]} -gt 0 ]; then
    spec="$install[$(printf '%s\n' "${extras[@]}" | sort -u | paste -sd, -)]"
    if [[ " ${extras[*]} " == *" embeddings "* ]] && [ "$(uname -s)" = Linux ]; then  # the CPU wheel, not the CUDA one
      "$python" -m pip install --quiet --disable-pip-version-check torch --index-url https://download.pytorch.org/whl/cpu \
        || { echo "error: could not install CPU torch for text embeddings" >&2; exit 2; }
    fi
  fi
  echo "pip install $spec" >&2
  "$python" -m pip install --quiet --disable-pip-version-check "$spec" || { echo "error: could not install betaconform from $spec" >&2; exit 2; }
fi
# every option as --name=VALUE (a value starting with '-' stays a value), the options before '--', the files after
# it: a "file" named --help, --on=estimate or --save-dir=DIR is a file, never an option
if [ -n "${BC_MAX_ERROR:-}" ]; then
  args+=("--max-error=$BC_MAX_ERROR")
  [ "$gate_k" = yes ] && args+=("--at-k=${BC_AT_K:-5}")
fi
[ -n "${BC_JUNIT:-}" ] && args+=("--junit=$BC_JUNIT")
[ -n "${BC_HTML:-}" ] && args+=("--output=$BC_HTML")
args+=("${extra[@]}" -- "${files[@]}")

echo "betaconform ${args[*]}" >&2
"$python" -m betaconform_cli "${args[@]}"
code=$?

# GitHub's multi-line syntax (name<<DELIMITER ... DELIMITER) with a random delimiter that the value does not hold:
# no value can end the block early and write another output (exit-code=0)
output() {
  local delimiter
  while :; do
    delimiter="ghadelimiter_$(od -An -N16 -tx1 /dev/urandom 2>/dev/null | tr -d ' \n')${RANDOM}${RANDOM}"
    case "$2" in *"$delimiter"*) ;; *) break ;; esac
  done
  printf '%s<<%s\n%s\n%s\n' "$1" "$delimiter" "$2" "$delimiter"
}
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    output exit-code "$code"
    output junit "${BC_JUNIT:-}"
    output html "${BC_HTML:-}"
  } >> "$GITHUB_OUTPUT"
fi
exit "$code"
