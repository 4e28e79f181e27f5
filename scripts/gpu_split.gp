# gpu_split.gp - where the wall time of one call goes per batch size, on a
# device with OpenCL event times: the decomposition of perfdb/split.h, whose
# parts add up to the median wall time of the call, stacked as shares of it.
# Variables: datafile (a "#" header line; first column the bar label, then
# launch, transfer, compute, other and the median wall time, all in ms),
# title_text, outbase.
reset
set title title_text noenhanced
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.75
set ylabel "% of the median wall time of one call"
set yrange [0:100]
set key below
set xtics font ",8"
set bmargin 7
do for [fmt in "png svg"] {
	if (fmt eq "png") { eval("set terminal ".png_term) } else { eval("set terminal ".svg_term) }
	set output outbase.".".fmt
	plot datafile using (100.0 * $2 / $6):xtic(1) title "launch + sync latency (device idle)" lc rgb "#e69f00", \
	     "" using (100.0 * $3 / $6) title "host-device transfers" lc rgb "#56b4e9", \
	     "" using (100.0 * $4 / $6) title "kernels (compute)" lc rgb "#009e73", \
	     "" using (100.0 * $5 / $6) title "other host work" lc rgb "#a0a0a0"
	set output
}
