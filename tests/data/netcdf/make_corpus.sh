#!/bin/sh
# Regenerates the netCDF-C corpus beside this script (run by hand; needs ncgen from the Debian
# package netcdf-bin): each CDL file written in NCZarr mode (<name>.nczarr) and in pure Zarr
# mode (<name>.zarr); scalar.cdl also in NCZarr mode without the _ARRAY_DIMENSIONS attributes
# (<name>.noxarray).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for cdl in sample chars scalar; do
  for mode in nczarr zarr; do
    out="$here/$cdl.$mode"
    rm -rf "$out"
    ncgen -4 -o "file://$out#mode=$mode,file" "$here/$cdl.cdl"
  done
done
rm -rf "$here/scalar.noxarray"
ncgen -4 -o "file://$here/scalar.noxarray#mode=nczarr,noxarray,file" "$here/scalar.cdl"
