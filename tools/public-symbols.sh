#!/bin/sh
# Print the functions the public header declares, one per line, sorted: the
# only symbols the shared library may export. The header is run through the
# preprocessor first so comments and #if'd-out parts do not count; typedefs
# (function types, callbacks) are dropped.
# usage: tools/public-symbols.sh [CC] [HEADER]
set -eu
cc=${1:-cc}
header=${2:-lib/include/rbarrier.h}
$cc -E -P -x c "$header" |
  tr '\n' ' ' | tr ';{}' '\n\n\n' |
  grep -v '^[[:space:]]*typedef' |
  grep -oE '(^|[^A-Za-z0-9_])rb_[A-Za-z0-9_]+[[:space:]]*\(' |
  sed -E 's/^[^r]*//; s/[[:space:]]*\($//' |
  sort -u
