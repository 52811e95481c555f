# tests/cli/svg_layout.awk: check the layout of a figure rendered with gnuplot's svg terminal.
#   awk -f svg_layout.awk -v W=1200 -v H=800 [-v min_area_frac=0.6] AREAS GP SVG
# AREAS: lines "AREA xmin xmax ymin ymax" (gnuplot's GPVAL_TERM_* after each plot, in px with y
# up); GP: the figure's script (the legend entries are its `title '...'` strings); SVG: the image.
# Each text's box is estimated as pngcairo draws the figure's Sans (DejaVu Sans; 1 pt = 1.25 px,
# per-character widths by class, the same table as src/plot/plot.c's pf_text_px, a bit wide).
# Fails (exit 1, one line per finding) when
#   - a text leaves the canvas;
#   - two texts overlap;
#   - a legend entry overlaps a plot area (the legend sits outside the data);
#   - a text is crossed by a drawn line (curves, threshold and break-even lines, error bars;
#     not the light grid);
#   - min_area_frac is set and no plot area is that wide a share of the canvas (the legend
#     leaves the data the width).
function em(ch) {
  if (index("ilj.,:;'|!", ch)) return 0.30
  if (index("ftrI()[] /-", ch)) return 0.42
  if (index("mwMW%", ch)) return 0.95
  if (ch ~ /[0-9]/) return 0.64
  if (ch ~ /[A-Z]/) return 0.72
  if (ch ~ /[a-z]/) return 0.60
  return 0.70
}
function width_px(s, pt,   i, w) { w = 0; for (i = 1; i <= length(s); i++) w += em(substr(s, i, 1)); return w * pt * 1.25 }
function unent(s) { gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&apos;/, "'", s); gsub(/&quot;/, "\"", s); gsub(/&amp;/, "\\&", s); return s }
function overlap(a, b, tol) {
  return x0[a] + tol < x1[b] && x0[b] + tol < x1[a] && y0[a] + tol < y1[b] && y0[b] + tol < y1[a]
}
# segment (ax,ay)-(bx,by) against the box of text t, shrunk by 1.5 px
function seg_hits(ax, ay, bx, by, t,   lx, hx, ly, hy, tt, t0, t1, dx, dy, p, q, k, r) {
  lx = x0[t] + 1.5; hx = x1[t] - 1.5; ly = y0[t] + 1.5; hy = y1[t] - 1.5
  if (lx >= hx || ly >= hy) return 0
  t0 = 0; t1 = 1; dx = bx - ax; dy = by - ay
  p[1] = -dx; q[1] = ax - lx; p[2] = dx; q[2] = hx - ax
  p[3] = -dy; q[3] = ay - ly; p[4] = dy; q[4] = hy - ay
  for (k = 1; k <= 4; k++) {
    if (p[k] == 0) { if (q[k] < 0) return 0; continue }
    r = q[k] / p[k]
    if (p[k] < 0) { if (r > t1) return 0; if (r > t0) t0 = r }
    else { if (r < t0) return 0; if (r < t1) t1 = r }
  }
  return 1
}
BEGIN { nt = 0; na = 0; nk = 0; ns = 0; bad = 0 }
FILENAME == ARGV[1] { if ($1 == "AREA") { na++; ax0[na] = $2; ax1[na] = $3; ay0[na] = H - $5; ay1[na] = H - $4 } next }
FILENAME == ARGV[2] {
  if ($0 ~ /^set (title|key .*title) /) next
  line = $0
  while (match(line, /title '([^']|'')*'/)) {
    t = substr(line, RSTART + 7, RLENGTH - 8); gsub(/''/, "'", t); key[t] = 1; nk++
    line = substr(line, RSTART + RLENGTH)
  }
  next
}
# the svg: a text is a <g transform="translate(X,Y)[ rotate(R)]" ... font-size="S" ... text-anchor="A"> then <text>
/<g transform="translate\(/ && /font-size=/ {
  tx = $0; sub(/.*translate\(/, "", tx); ty = tx; sub(/,.*/, "", tx); sub(/^[^,]*,/, "", ty); sub(/\).*/, "", ty)
  rot = ($0 ~ /rotate\(/); fs = $0; sub(/.*font-size="/, "", fs); sub(/".*/, "", fs)
  anc = "start"; if ($0 ~ /text-anchor="middle"/) anc = "middle"; else if ($0 ~ /text-anchor="end"/) anc = "end"
  pending = 1; next
}
pending && /<text>/ {
  pending = 0
  s = $0; sub(/.*<text>/, "", s); sub(/<\/text>.*/, "", s); s = unent(s); gsub(/^ +| +$/, "", s)
  if (s == "") next
  nt++; txt[nt] = s; w = width_px(s, fs); e = fs * 1.25
  if (anc == "start") { a = 0; b = w } else if (anc == "middle") { a = -w / 2; b = w / 2 } else { a = -w; b = 0 }
  if (!rot) { x0[nt] = tx + a; x1[nt] = tx + b; y0[nt] = ty - 0.75 * e; y1[nt] = ty + 0.2 * e }
  else { x0[nt] = tx - 0.75 * e; x1[nt] = tx + 0.2 * e; y0[nt] = ty - b; y1[nt] = ty - a }
  iskey[nt] = (s in key)
  next
}
# paths, possibly several on a line or one over several lines: the segments of stroked ones
function path_segments(el,   d, n, tok, i, c, cmd, xy, px, py) {
  if (el !~ /stroke=/ || el ~ /class="gridline"/ || el ~ /id='gpPt/ || el !~ /d='/) return
  d = el; sub(/.*d='/, "", d); sub(/'.*/, "", d); gsub(/[\t\n]+/, " ", d)
  n = split(d, tok, / +/); px = ""; py = ""
  for (i = 1; i <= n; i++) {
    c = tok[i]; if (c == "") continue
    cmd = substr(c, 1, 1); if (cmd != "M" && cmd != "L") continue
    split(substr(c, 2), xy, ","); if (xy[2] == "") continue
    if (cmd == "L" && px != "") { ns++; sx0[ns] = px; sy0[ns] = py; sx1[ns] = xy[1]; sy1[ns] = xy[2] }
    px = xy[1]; py = xy[2]
  }
}
inpath || /<path / {
  rest = inpath ? pbuf " " $0 : substr($0, index($0, "<path "))
  inpath = 0
  while (rest != "") {
    e = index(rest, "/>")
    if (!e) { pbuf = rest; inpath = 1; break }
    path_segments(substr(rest, 1, e))
    rest = substr(rest, e + 2)
    k = index(rest, "<path "); if (!k) break
    rest = substr(rest, k)
  }
}
function report(msg) { bad++; if (bad <= 20) print FILENAME ": " msg }
END {
  FILENAME = ARGV[3]
  if (nt == 0 || na == 0) { print FILENAME ": nothing to check (" nt " texts, " na " plot areas)"; exit 1 }
  for (t = 1; t <= nt; t++)
    if (x0[t] < -1 || x1[t] > W + 1 || y0[t] < -1 || y1[t] > H + 1)
      report(sprintf("text '%s' leaves the canvas (%.0f..%.0f x %.0f..%.0f of %dx%d)", txt[t], x0[t], x1[t], y0[t], y1[t], W, H))
  for (t = 1; t <= nt; t++) for (u = t + 1; u <= nt; u++)
    if (overlap(t, u, 1.0)) report(sprintf("texts '%s' and '%s' overlap", txt[t], txt[u]))
  for (t = 1; t <= nt; t++) if (iskey[t]) for (a = 1; a <= na; a++)
    if (x0[t] + 1 < ax1[a] && ax0[a] + 1 < x1[t] && y0[t] + 1 < ay1[a] && ay0[a] + 1 < y1[t])
      report(sprintf("legend entry '%s' lies over plot area %d (%.0f..%.0f x %.0f..%.0f)", txt[t], a, ax0[a], ax1[a], ay0[a], ay1[a]))
  for (s = 1; s <= ns; s++) for (t = 1; t <= nt; t++)
    if (seg_hits(sx0[s], sy0[s], sx1[s], sy1[s], t))
      report(sprintf("a line (%.0f,%.0f)-(%.0f,%.0f) crosses the text '%s'", sx0[s], sy0[s], sx1[s], sy1[s], txt[t]))
  if (min_area_frac > 0) {
    wmax = 0; for (a = 1; a <= na; a++) if (ax1[a] - ax0[a] > wmax) wmax = ax1[a] - ax0[a]
    if (wmax < min_area_frac * W) report(sprintf("the widest plot area is %.0f px of %d (want >= %.0f%%: the legend takes the width)", wmax, W, 100 * min_area_frac))
  }
  if (bad > 20) print FILENAME ": ... " bad " findings in all"
  printf "%s: %d texts (%d legend entries), %d plot areas, %d line segments: %s\n", FILENAME, nt, nk, na, ns, bad ? "FAIL" : "ok"
  exit bad ? 1 : 0
}
