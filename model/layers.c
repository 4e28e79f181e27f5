/*
 * layers.c - each layer kind's family (include/xo/layers.def's family
 * column): the runtime reaches a kind's variables, initialisers, forward,
 * backward and cost through this table alone.
 */
#include "model_run.h"

const struct xo_layer_family *const xo_layer_families[XO_LAYER_COUNT] = {
#define XO_LAYER(kind, spec, keras, op, net, family) [XO_LAYER_##kind] = &xo_family_##family,
#include "xo/layers.def"
#undef XO_LAYER
};
