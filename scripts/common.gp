# common.gp - terminals for every crossover plot (loaded by the driver that
# `xo perf report` writes). pngcairo when this gnuplot has it, else libgd png.
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
	png_term = "pngcairo enhanced size 960,600 font 'Sans,10'"
} else {
	png_term = "png size 960,600"
}
svg_term = "svg enhanced size 960,600 dynamic font 'Sans,10'"
set datafile missing "NaN"
# One colour per device in every plot (crossover and history alike): the
# device's name before any "@testbed" or ":platform:device" suffix picks
# it; a device not named here gets the colour of its place i in the plot
# from a palette that none of the named ones use.
devbase(d) = strstrt(d, "@") > 0 ? d[1:strstrt(d, "@") - 1] : d
devname(d) = strstrt(devbase(d), ":") > 0 ? devbase(d)[1:strstrt(devbase(d), ":") - 1] : devbase(d)
devcolor(d, i) = devname(d) eq "cpu" ? 0x0072b2 : devname(d) eq "cl" ? 0xe69f00 : \
                 devname(d) eq "ref" ? 0x606060 : devname(d) eq "pytorch-cpu" ? 0x009e73 : \
                 devname(d) eq "jax-cpu" ? 0xcc79a7 : \
                 devspare((i - 1) % 4)
devspare(k) = k == 0 ? 0x56b4e9 : k == 1 ? 0xd55e00 : k == 2 ? 0x8c564b : 0x000000
