/*
 * test_keras_config.c - the config.json xo writes, field by field against the
 * one Keras writes for the same model (suites/golden/keras_config/, made by
 * scripts/make_keras_configs.py from real Keras: CASE.model is the spec,
 * CASE.json Keras's own config.json of the same Sequential).
 *
 * Every layer kind xo exports is in a case, with every argument xo writes set
 * to a value other than Keras's default somewhere (strides, padding,
 * dilation, use_bias, activations, BatchNormalization's momentum, epsilon,
 * center and scale, the recurrent layers' return_sequences, go_backwards and
 * reset_after). Compared recursively: no key missing, no key extra, the same
 * value and JSON type (an integer is not a real); the first difference is
 * named by its path (`layers[3].config.go_backwards`). The only key left out
 * is Keras's `shared_object_id`, the Python id() of a shared dtype policy
 * object, which differs on every save and which Keras's loader does not
 * need. The compile_* cases are compiled in Keras as their spec's compile
 * line says (each optimizer with hyperparameters off its defaults), and
 * their `compile_config` is compared too; the other cases' Keras models
 * were never compiled (Keras writes `{}`), so theirs is left out.
 *
 * Both directions: xo's export of CASE.model, and xo's import of CASE.json
 * (config -> spec -> model) exported again, so an importer that drops or
 * inverts an argument is caught the same way; the legacy reader too, from
 * CASE.h5config.json (the model_config attribute of Keras's legacy
 * model.save("CASE.h5"); xo writes no legacy .h5, so only its reading is
 * compared). The comparator is checked
 * too: each kind of difference planted in a copy of a fixture is reported,
 * at its path.
 */
#define _XOPEN_SOURCE 700
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

#include <cmocka.h>

#include "xo/model_spec.h"

#ifndef XO_KERAS_CONFIG_DIR
#error "XO_KERAS_CONFIG_DIR must name suites/golden/keras_config"
#endif

static const char *const cases[] = {
    "conv1d", "dense",     "conv2d",       "global2d",    "gmax2d",         "bn",
    "rnn",    "embedding", "compile_adam", "compile_sgd", "compile_rmsprop", "graph",
    "time_distributed", "bidirectional", "bidir_graph", "multi"};

static char g_tmp[256];

static const char *type_name(const json_t *v)
{
	static const char *const names[] = {"object", "array", "string", "integer",
	                                    "real",   "true",  "false",  "null"};

	return names[json_typeof(v)];
}

/* The first difference between a (xo) and b (Keras) below path, written to
 * why; false when they agree. */
static bool json_differs(const json_t *a, const json_t *b, const char *path, char *why, size_t cap)
{
	char sub[512];

	if (json_typeof(a) != json_typeof(b)) {
		snprintf(why, cap, "%s: xo has %s, Keras %s", path, type_name(a), type_name(b));
		return true;
	}
	switch (json_typeof(a)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *v;

		json_object_foreach((json_t *)b, k, v)
		{
			if (!strcmp(k, "shared_object_id"))
				continue;
			snprintf(sub, sizeof(sub), "%s.%s", path, k);
			if (!json_object_get(a, k)) {
				snprintf(why, cap, "%s: missing in xo's config", sub);
				return true;
			}
			if (json_differs(json_object_get(a, k), v, sub, why, cap))
				return true;
		}
		json_object_foreach((json_t *)a, k, v)
		{
			if (strcmp(k, "shared_object_id") && !json_object_get(b, k)) {
				snprintf(why, cap, "%s.%s: xo writes it, Keras does not", path, k);
				return true;
			}
		}
		return false;
	}
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b)) {
			snprintf(why, cap, "%s: xo has %zu elements, Keras %zu", path,
			         json_array_size(a), json_array_size(b));
			return true;
		}
		for (size_t i = 0; i < json_array_size(a); i++) {
			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			if (json_differs(json_array_get(a, i), json_array_get(b, i), sub, why, cap))
				return true;
		}
		return false;
	case JSON_STRING:
		if (strcmp(json_string_value(a), json_string_value(b))) {
			snprintf(why, cap, "%s: xo \"%s\", Keras \"%s\"", path,
			         json_string_value(a), json_string_value(b));
			return true;
		}
		return false;
	case JSON_INTEGER:
		if (json_integer_value(a) != json_integer_value(b)) {
			snprintf(why, cap, "%s: xo %lld, Keras %lld", path,
			         (long long)json_integer_value(a),
			         (long long)json_integer_value(b));
			return true;
		}
		return false;
	case JSON_REAL:
		if (json_real_value(a) != json_real_value(b)) {
			snprintf(why, cap, "%s: xo %.17g, Keras %.17g", path, json_real_value(a),
			         json_real_value(b));
			return true;
		}
		return false;
	default: /* true, false, null: the type is the value */
		return false;
	}
}

/* The config compared: the whole file, less compile_config where Keras's
 * model was never compiled (file comment). */
static bool config_differs(json_t *xo, json_t *keras, char *why, size_t cap)
{
	json_t *a = json_deep_copy(xo), *b = json_deep_copy(keras);
	json_t *kc = json_object_get(keras, "compile_config");
	bool d;

	assert_true(a && b);
	if (!kc || (json_is_object(kc) && !json_object_size(kc))) {
		json_object_del(a, "compile_config");
		json_object_del(b, "compile_config");
	}
	d = json_differs(a, b, "$", why, cap);
	json_decref(a);
	json_decref(b);
	return d;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	s = malloc((size_t)n + 1);
	assert_non_null(s);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

/* config.json of the .keras archive at path. */
static json_t *archive_config(const char *path)
{
	int err = 0;
	zip_t *z = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &err);
	zip_stat_t zs;
	zip_file_t *zf;
	char *s;
	json_error_t je;
	json_t *j;

	assert_non_null(z);
	assert_int_equal(zip_stat(z, "config.json", 0, &zs), 0);
	s = malloc((size_t)zs.size + 1);
	assert_non_null(s);
	zf = zip_fopen(z, "config.json", 0);
	assert_non_null(zf);
	assert_int_equal(zip_fread(zf, s, zs.size), (zip_int64_t)zs.size);
	s[zs.size] = '\0';
	zip_fclose(zf);
	zip_discard(z);
	j = json_loads(s, 0, &je);
	if (!j)
		fail_msg("%s: config.json: %s", path, je.text);
	free(s);
	return j;
}

/* The config.json xo writes for the model of spec text. */
static json_t *xo_config(struct xo_backend *be, const char *spec, const char *name)
{
	char path[512];
	struct xo_model *m;
	json_t *j;

	if (xo_model_open_string(spec, name, be, 4, &m))
		fail_msg("%s: %s", name, xo_last_error());
	snprintf(path, sizeof(path), "%s/%s.keras", g_tmp, name);
	if (xo_model_save_weights(m, path))
		fail_msg("%s: %s", name, xo_last_error());
	xo_model_close(m);
	j = archive_config(path);
	unlink(path);
	return j;
}

static json_t *keras_config(const char *name, char **text)
{
	char path[512];
	json_error_t je;
	json_t *j;

	snprintf(path, sizeof(path), "%s/%s.json", XO_KERAS_CONFIG_DIR, name);
	*text = read_text(path);
	j = json_loads(*text, 0, &je);
	if (!j)
		fail_msg("%s: %s", path, je.text);
	return j;
}

/* xo's export of CASE.model equals Keras's config.json. */
static void test_export_matches_keras(void **state)
{
	struct xo_backend *be;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char path[512], why[1024], *spec, *text;
		json_t *keras = keras_config(cases[c], &text), *xo;

		snprintf(path, sizeof(path), "%s/%s.model", XO_KERAS_CONFIG_DIR, cases[c]);
		spec = read_text(path);
		xo = xo_config(be, spec, cases[c]);
		if (config_differs(xo, keras, why, sizeof(why)))
			fail_msg("%s (xo's export of %s.model against Keras's config.json): %s",
			         cases[c], cases[c], why);
		json_decref(xo);
		json_decref(keras);
		free(spec);
		free(text);
	}
	xo_backend_close(be);
}

/* Keras's config.json read by xo (config -> spec) and written again equals
 * Keras's: the importer keeps every argument it accepts. */
static void test_import_export_matches_keras(void **state)
{
	struct xo_backend *be;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char why[1024], *spec, *text;
		json_t *keras = keras_config(cases[c], &text), *xo;

		if (xo_keras_config_to_spec(text, strlen(text), cases[c], &spec))
			fail_msg("%s: %s", cases[c], xo_last_error());
		xo = xo_config(be, spec, cases[c]);
		if (config_differs(xo, keras, why, sizeof(why)))
			fail_msg("%s (Keras's config.json imported by xo and written again): %s",
			         cases[c], why);
		json_decref(xo);
		json_decref(keras);
		free(spec);
		free(text);
	}
	xo_backend_close(be);
}

/* The legacy format: the model_config of Keras's model.save("CASE.h5") read
 * by xo and written as a .keras equals Keras's own .keras config (the
 * compiled cases have no legacy file). */
static void test_legacy_import_matches_keras(void **state)
{
	struct xo_backend *be;
	int n = 0;

	(void)state;
	assert_int_equal(xo_backend_open("ref", &be), XO_OK);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char path[512], why[1024], *spec, *text, *legacy;
		json_t *keras, *xo;

		snprintf(path, sizeof(path), "%s/%s.h5config.json", XO_KERAS_CONFIG_DIR, cases[c]);
		if (access(path, F_OK))
			continue;
		n++;
		keras = keras_config(cases[c], &text);
		legacy = read_text(path);
		if (xo_keras_config_to_spec(legacy, strlen(legacy), path, &spec))
			fail_msg("%s: %s", cases[c], xo_last_error());
		xo = xo_config(be, spec, cases[c]);
		if (config_differs(xo, keras, why, sizeof(why)))
			fail_msg(
			    "%s (Keras's legacy .h5 model_config imported by xo and written as "
			    ".keras): %s",
			    cases[c], why);
		json_decref(xo);
		json_decref(keras);
		free(spec);
		free(text);
		free(legacy);
	}
	assert_int_equal(n, 13); /* every uncompiled case has its legacy config */
	xo_backend_close(be);
}

/* The comparator finds each kind of difference, at its path. */
static void test_comparator_catches(void **state)
{
	static const struct {
		const char *path; /* a key of layers[1].config */
		int how;          /* 0 delete, 1 add, 2 flip bool, 3 int->real, 4 string, 5 array */
		const char *needle;
	} plants[] = {
	    {"go_backwards", 0, "layers[1].config.go_backwards: missing"},
	    {"stateful_extra", 1, "layers[1].config.stateful_extra: xo writes it"},
	    {"go_backwards", 2, "layers[1].config.go_backwards: xo has false, Keras true"},
	    {"units", 3, "layers[1].config.units: xo has real, Keras integer"},
	    {"activation", 4, "layers[1].config.activation: xo \"x\""},
	    {"units", 5, "layers[1].config.units: xo has array, Keras integer"},
	};
	char *text, why[1024];
	json_t *keras = keras_config("rnn", &text);

	(void)state;
	assert_false(config_differs(keras, keras, why, sizeof(why)));
	for (size_t i = 0; i < sizeof(plants) / sizeof(plants[0]); i++) {
		json_t *a = json_deep_copy(keras);
		json_t *cfg = json_object_get(
		    json_array_get(json_object_get(json_object_get(a, "config"), "layers"), 1),
		    "config");
		json_t *v = json_object_get(cfg, plants[i].path);

		assert_non_null(cfg);
		switch (plants[i].how) {
		case 0:
			json_object_del(cfg, plants[i].path);
			break;
		case 1:
			json_object_set_new(cfg, plants[i].path, json_false());
			break;
		case 2:
			json_object_set_new(cfg, plants[i].path, json_boolean(!json_is_true(v)));
			break;
		case 3:
			json_object_set_new(cfg, plants[i].path,
			                    json_real((double)json_integer_value(v)));
			break;
		case 4:
			json_object_set_new(cfg, plants[i].path, json_string("x"));
			break;
		default:
			json_object_set_new(cfg, plants[i].path,
			                    json_pack("[I]", (json_int_t)json_integer_value(v)));
			break;
		}
		if (!config_differs(a, keras, why, sizeof(why)))
			fail_msg("plant %zu (%s) not found", i, plants[i].path);
		if (!strstr(why, plants[i].needle))
			fail_msg("plant %zu: '%s' does not say '%s'", i, why, plants[i].needle);
		json_decref(a);
	}
	/* the compile_config is left out only where Keras's is {} */
	{
		json_t *a = json_deep_copy(keras), *k2 = json_deep_copy(keras);

		json_object_set_new(a, "compile_config", json_string("x"));
		assert_false(config_differs(a, keras, why, sizeof(why)));
		json_object_set_new(k2, "compile_config", json_pack("{s:s}", "loss", "mse"));
		assert_true(config_differs(a, k2, why, sizeof(why)));
		assert_non_null(strstr(why, "$.compile_config: xo has string, Keras object"));
		json_decref(k2);
		json_object_set_new(a, "build_config", json_null());
		assert_true(config_differs(a, keras, why, sizeof(why)));
		json_decref(a);
	}
	json_decref(keras);
	free(text);
}

static int setup(void **state)
{
	(void)state;
	snprintf(g_tmp, sizeof(g_tmp), "%s/xo_kcfg_XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(g_tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(g_tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_comparator_catches),
	    cmocka_unit_test(test_export_matches_keras),
	    cmocka_unit_test(test_import_export_matches_keras),
	    cmocka_unit_test(test_legacy_import_matches_keras),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
