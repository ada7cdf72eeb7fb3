/* eval.c — how well a model predicts a text: the summed negative log-likelihood of each next
 * token (log-softmax of the logits at the token before it), over one pass of the model. */
#include "attnlab/model.h"
#include "base/internal.h"

#include <math.h>
#include <stdlib.h>

al_status al_model_nll(al_model *m, const int32_t *ids, int64_t n, double *sum, int64_t *count, al_error *err) {
    if (!m || !ids || !sum || !count || n < 2) return al_fail(err, AL_ERR_ARG, "model NLL: NULL argument or fewer than 2 ids");
    const int64_t V = al_model_get_hparams(m)->vocab;
    float *logits = malloc((size_t)(n * V) * sizeof *logits);
    if (!logits) return al_fail(err, AL_ERR_NOMEM, "model NLL: out of memory");
    al_model_reset(m);
    al_status st = al_model_forward(m, ids, n, logits, n, n * V, NULL, 0, err);
    for (int64_t t = 0; st == AL_OK && t + 1 < n; t++) {
        /* −log softmax(z_t)[ids[t+1]] = logsumexp(z_t) − z_t[ids[t+1]] */
        const float *z = logits + t * V;
        float max = -INFINITY;
        for (int64_t j = 0; j < V; j++) max = z[j] > max ? z[j] : max;
        double s = 0.0;
        for (int64_t j = 0; j < V; j++) s += exp((double)z[j] - max);
        *sum += log(s) + max - z[ids[t + 1]];
        (*count)++;
    }
    free(logits);
    return st;
}
