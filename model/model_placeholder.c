/* placeholder until model/ is written */
typedef int xo_model_placeholder;
