# tools/device/versions.sh: sourced by the device scripts (from the twenty-first session on; the older
# scripts keep the lines they ran with).  tps_dev_versions BIN: the date, the GPU, its driver and SM
# clock, nvcc, and the NCCL and CUDA runtime libraries BIN/tpsplit loads: the provenance lines every
# data file made on a device carries.
tps_dev_versions() {
  echo "##### versions"; date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nvcc --version | tail -1
  for l in $(ldd "$1/tpsplit" | awk '/nccl|cudart/ {print $3}'); do echo "$l -> $(readlink -f "$l")"; done
}
