/* No positions at all. Attention is then permutation-equivariant: permuting
 * the input tokens permutes the output rows, bit for bit. Useful as the
 * ablation baseline: an order-dependent task must collapse without positions. */
#include "../../core/plugin.h"

const sf_position_plugin sf_position_none = {
    .api_version = SF_PLUGIN_API_VERSION,
    .name = "none",
};
