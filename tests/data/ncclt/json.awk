# tests/data/ncclt/json.txt from current.txt: nccl-tests -J layout (src/util.cu), one line,
# doubles as "%lf" (here %f: the same output), devices = one entry per process.
BEGIN { n = 8 }
!/^#/ && NF == 13 {
  a1 = $1 / $6 / 1e3; a2 = $1 / $10 / 1e3
  r = r sprintf("%s{\"size\":%d,\"count\":%d,\"type\":\"%s\",\"redop\":\"none\",\"root\":\"    -1\",\"out_of_place\":{\"time\":%f,\"alg_bw\":%f,\"bus_bw\":%f,\"nwrong\":%f},\"in_place\":{\"time\":%f,\"alg_bw\":%f,\"bus_bw\":%f,\"nwrong\":%f},\"actual_iterations\":20,\"experiment_name\":\"all_gather_perf\"}", (k++ ? "," : ""), $1, $2, $3, $6, a1, a1 * (n - 1) / n, 0, $10, a2, a2 * (n - 1) / n, 0)
  s += a1 * (n - 1) / n + a2 * (n - 1) / n; c += 2 }
END {
  printf "{\"version\":2,\"start_time\":\"2026-11-30 09:14:02\",\"args\":[\"./build/all_gather_perf\",\"-b\",\"1K\",\"-e\",\"1G\",\"-f\",\"2\",\"-g\",\"8\",\"-d\",\"bfloat16\",\"-J\",\"ag_h20.json\"],\"env\":[\"PATH=\\/usr\\/local\\/cuda\\/bin:\\/usr\\/bin:\\/bin\",\"NCCL_DEBUG=WARN\"],\"nccl_version\":22907,"
  printf "\"config\":{\"nthreads\":1,\"ngpus\":8,\"minimum_bytes\":1024,\"maximum_bytes\":1073741824,\"step_factor\":2,\"warmup_iters\":5,\"iterations\":20,\"aggregated_iterations\":1,\"validation\":1,\"graph\":0,\"blocking_collectives\":\"false\",\"per_iter_timing\":\"false\",\"parallel_init\":\"false\",\"devices\":[{\"rank\":0,\"group\":0,\"pid\":214977,\"hostname\":\"h20-node07\",\"device\":0,\"device_hex\":\"0000:0f:00\",\"device_info\":\"NVIDIA H20\"}]},"
  printf "\"results\":[%s],\"out_of_bounds\":{\"count\":0,\"okay\":\"true\"},\"average_bus_bandwidth\":{\"bandwidth\":%f,\"okay\":\"unchecked\"},\"errors\":[],\"end_time\":\"2026-11-30 09:14:31\"}", r, s / c
}
