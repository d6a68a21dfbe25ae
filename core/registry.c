/* The plugin registry: two lists of pointers to const plugin structs.
 * Lookup is by name; a second plugin with a name already taken is refused.
 * The registry never owns, copies or frees a plugin.
 *
 * To add a built-in plugin, add one X(...) line to the list below for a
 * struct named sf_position_<name> or sf_norm_<name> (see plugins/README.md). */
#include <string.h>

#include "plugin.h"

#define SF_BUILTIN_POSITIONS(X) X(sinusoidal) X(learned) X(rope) X(alibi) X(t5) X(disentangled) X(none)
#define SF_BUILTIN_NORMS(X)     X(layernorm) X(rmsnorm)

#define DECLARE_POSITION(n) extern const sf_position_plugin sf_position_##n;
#define DECLARE_NORM(n)     extern const sf_norm_plugin sf_norm_##n;
SF_BUILTIN_POSITIONS(DECLARE_POSITION)
SF_BUILTIN_NORMS(DECLARE_NORM)

#define SF_REGISTRY_CAP 32

static const sf_position_plugin *positions[SF_REGISTRY_CAP];
static const sf_norm_plugin *norms[SF_REGISTRY_CAP];
static int n_positions, n_norms, initialised;

static int check_plugin(int api_version, const char *name, const char *kind, sf_error *err) {
    if (api_version < SF_PLUGIN_API_MIN || api_version > SF_PLUGIN_API_VERSION)
        return sf_fail(err, SF_BAD_PLUGIN, "%s plugin '%s' has api version %d, this core takes %d to %d", kind, name ? name : "?", api_version,
                       SF_PLUGIN_API_MIN, SF_PLUGIN_API_VERSION);
    if (!name || !name[0] || strlen(name) > 48) return sf_fail(err, SF_BAD_PLUGIN, "%s plugin needs a name of 1 to 48 characters", kind);
    return SF_OK;
}

static void init_builtins(void) {
    if (initialised) return;
    initialised = 1;
#define ADD_POSITION(n) sf_register_position(&sf_position_##n, NULL);
#define ADD_NORM(n)     sf_register_norm(&sf_norm_##n, NULL);
    SF_BUILTIN_POSITIONS(ADD_POSITION)
    SF_BUILTIN_NORMS(ADD_NORM)
}

const sf_position_plugin *sf_find_position(const char *name) {
    init_builtins();
    for (int i = 0; i < n_positions; i++)
        if (!strcmp(positions[i]->name, name)) return positions[i];
    return NULL;
}

const sf_norm_plugin *sf_find_norm(const char *name) {
    init_builtins();
    for (int i = 0; i < n_norms; i++)
        if (!strcmp(norms[i]->name, name)) return norms[i];
    return NULL;
}

int sf_register_position(const sf_position_plugin *p, sf_error *err) {
    int rc = check_plugin(p->api_version, p->name, "position", err);
    if (rc) return rc;
    if (sf_find_position(p->name)) return sf_fail(err, SF_PLUGIN_EXISTS, "a position plugin named '%s' is registered already", p->name);
    if (n_positions == SF_REGISTRY_CAP) return sf_fail(err, SF_OUT_OF_MEMORY, "the position registry is full (%d)", SF_REGISTRY_CAP);
    positions[n_positions++] = p;
    return SF_OK;
}

int sf_register_norm(const sf_norm_plugin *p, sf_error *err) {
    int rc = check_plugin(p->api_version, p->name, "norm", err);
    if (rc) return rc;
    if (!p->forward) return sf_fail(err, SF_BAD_PLUGIN, "norm plugin '%s' has no forward", p->name);
    if (sf_find_norm(p->name)) return sf_fail(err, SF_PLUGIN_EXISTS, "a norm plugin named '%s' is registered already", p->name);
    if (n_norms == SF_REGISTRY_CAP) return sf_fail(err, SF_OUT_OF_MEMORY, "the norm registry is full (%d)", SF_REGISTRY_CAP);
    norms[n_norms++] = p;
    return SF_OK;
}

int sf_position_count(void) {
    init_builtins();
    return n_positions;
}
int sf_norm_count(void) {
    init_builtins();
    return n_norms;
}
const sf_position_plugin *sf_position_at(int i) {
    init_builtins();
    return i >= 0 && i < n_positions ? positions[i] : NULL;
}
const sf_norm_plugin *sf_norm_at(int i) {
    init_builtins();
    return i >= 0 && i < n_norms ? norms[i] : NULL;
}
