# history.gp - one benchmark's history on one testbed: median per run with
# its 95% CI (order statistics), the minimum as points, detected changes as
# red diamonds. Variables: datafile, title_text, outbase, nchanges, npoints.
# datafile columns: idx median_ms ci_lo ci_hi min_ms change_marker commit
reset
set datafile missing "NaN"
set title title_text noenhanced
set xlabel "run (oldest to newest; + = dirty work tree)"
set ylabel "time per call (ms)"
set grid ytics
set key outside top center horizontal
set xtics rotate by 45 right
set yrange [0:*]
set xrange [-0.5:npoints - 0.5]
do for [fmt in "png svg"] {
	if (fmt eq "png") { eval("set terminal ".png_term) } else { eval("set terminal ".svg_term) }
	set output outbase.".".fmt
	if (nchanges > 0) {
		plot datafile using 1:2:3:4:xtic(7) with yerrorlines lw 2 pt 7 ps 0.7 title "median (95% CI)", \
		     "" using 1:5 with points pt 1 ps 1 lc rgb "#555555" title "min", \
		     "" using 1:6 with points pt 12 ps 2.5 lw 2 lc rgb "red" title "change"
	} else {
		plot datafile using 1:2:3:4:xtic(7) with yerrorlines lw 2 pt 7 ps 0.7 title "median (95% CI)", \
		     "" using 1:5 with points pt 1 ps 1 lc rgb "#555555" title "min"
	}
	set output
}
