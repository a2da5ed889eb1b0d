/* hub.c - the mailbox between the sim and network threads (see hub.h). */
#include "hub.h"

#include <stdlib.h>
#include <string.h>

int hub_init(hub *h) {
    memset(h, 0, sizeof *h);
    h->replies = calloc(HUB_REPLY_RING, sizeof *h->replies);
    if (!h->replies) return -1;
    pthread_mutex_init(&h->mtx, NULL);
    return 0;
}

void hub_destroy(hub *h) {
    if (!h->replies) return;
    for (int i = 0; i < HUB_FRAME_RING; i++) frameset_unref(&h->frames[i]);
    for (int i = 0; i < HUB_BCAST_RING; i++) msg_buf_unref(h->bcast[i]);
    for (int i = 0; i < h->reply_count; i++) cmd_reply_free_payload(&h->replies[(h->reply_head + i) % HUB_REPLY_RING]);
    for (int i = 0; i < HUB_UPLOADS; i++) msg_buf_unref(h->upload[i].buf);
    free(h->replies);
    pthread_mutex_destroy(&h->mtx);
    memset(h, 0, sizeof *h);
}

void hub_wake(hub *h) {
    if (h->wake) h->wake(h->wake_arg);
}

void hub_publish_frameset(hub *h, frameset *f) {
    pthread_mutex_lock(&h->mtx);
    frameset old = h->frames[h->frames_next % HUB_FRAME_RING];
    h->frames[h->frames_next % HUB_FRAME_RING] = *f;
    h->frames_next++;
    pthread_mutex_unlock(&h->mtx);
    memset(f, 0, sizeof *f);
    frameset_unref(&old);
}

void hub_set_rec_status(hub *h, const rec_status *r) {
    pthread_mutex_lock(&h->mtx);
    h->rec = *r;
    pthread_mutex_unlock(&h->mtx);
}

void hub_get_rec_status(hub *h, rec_status *out) {
    pthread_mutex_lock(&h->mtx);
    *out = h->rec;
    pthread_mutex_unlock(&h->mtx);
}

uint64_t hub_bcast_next(hub *h) {
    pthread_mutex_lock(&h->mtx);
    uint64_t n = h->bcast_next;
    pthread_mutex_unlock(&h->mtx);
    return n;
}

void hub_get_frame_wants(hub *h, frame_wants *out) {
    pthread_mutex_lock(&h->mtx);
    *out = h->wants;
    pthread_mutex_unlock(&h->mtx);
}

void hub_set_frame_wants(hub *h, const frame_wants *w) {
    pthread_mutex_lock(&h->mtx);
    h->wants = *w;
    pthread_mutex_unlock(&h->mtx);
}

int hub_take_framesets(hub *h, uint64_t *next, frameset *out, int max) {
    int k = 0;
    pthread_mutex_lock(&h->mtx);
    if (h->frames_next > HUB_FRAME_RING && *next < h->frames_next - HUB_FRAME_RING)
        *next = h->frames_next - HUB_FRAME_RING;
    while (*next < h->frames_next && k < max) {
        out[k++] = frameset_ref(&h->frames[*next % HUB_FRAME_RING]);
        (*next)++;
    }
    pthread_mutex_unlock(&h->mtx);
    return k;
}

void hub_publish_bcast(hub *h, msg_buf *m) {
    pthread_mutex_lock(&h->mtx);
    int slot = (int)(h->bcast_next % HUB_BCAST_RING);
    msg_buf *old = h->bcast[slot];
    h->bcast[slot] = m;
    h->bcast_next++;
    pthread_mutex_unlock(&h->mtx);
    msg_buf_unref(old);
}

void hub_post_reply(hub *h, cmd_reply *r) {
    bool dropped = false;
    pthread_mutex_lock(&h->mtx);
    if (h->reply_count < HUB_REPLY_RING) {
        h->replies[(h->reply_head + h->reply_count) % HUB_REPLY_RING] = *r;
        h->reply_count++;
    } else {
        h->replies_dropped++;
        dropped = true;
    }
    pthread_mutex_unlock(&h->mtx);
    if (dropped) cmd_reply_free_payload(r);
    r->snap = NULL; /* the hub (the network thread) owns them now */
    r->bodies = NULL;
    r->blob = NULL;
}

void hub_set_info(hub *h, const world_info *wi) {
    pthread_mutex_lock(&h->mtx);
    h->info = *wi;
    pthread_mutex_unlock(&h->mtx);
}

void hub_set_stats(hub *h, const sim_stats *st) {
    pthread_mutex_lock(&h->mtx);
    h->stats = *st;
    h->stats.replies_dropped = h->replies_dropped;
    pthread_mutex_unlock(&h->mtx);
}

void hub_get_info(hub *h, world_info *out) {
    pthread_mutex_lock(&h->mtx);
    *out = h->info;
    pthread_mutex_unlock(&h->mtx);
}

void hub_get_stats(hub *h, sim_stats *out) {
    pthread_mutex_lock(&h->mtx);
    *out = h->stats;
    pthread_mutex_unlock(&h->mtx);
}

int hub_take_bcast(hub *h, uint64_t *next, msg_buf **out, int max, bool *lost) {
    int n = 0;
    *lost = false;
    pthread_mutex_lock(&h->mtx);
    uint64_t oldest = h->bcast_next > HUB_BCAST_RING ? h->bcast_next - HUB_BCAST_RING : 0;
    if (*next < oldest) {
        *lost = true;
        *next = oldest;
    }
    while (n < max && *next < h->bcast_next) {
        out[n++] = msg_buf_ref(h->bcast[*next % HUB_BCAST_RING]);
        (*next)++;
    }
    pthread_mutex_unlock(&h->mtx);
    return n;
}

int hub_take_replies(hub *h, cmd_reply *out, int max) {
    int n = 0;
    pthread_mutex_lock(&h->mtx);
    while (n < max && h->reply_count > 0) {
        out[n++] = h->replies[h->reply_head];
        h->reply_head = (h->reply_head + 1) % HUB_REPLY_RING;
        h->reply_count--;
    }
    pthread_mutex_unlock(&h->mtx);
    return n;
}

uint32_t hub_put_upload(hub *h, msg_buf *buf) {
    uint32_t id = 0;
    pthread_mutex_lock(&h->mtx);
    for (int i = 0; i < HUB_UPLOADS && !id; i++)
        if (!h->upload[i].buf) {
            if (++h->next_upload == 0) h->next_upload = 1;
            id = h->next_upload;
            h->upload[i].id = id;
            h->upload[i].buf = buf;
        }
    pthread_mutex_unlock(&h->mtx);
    return id;
}

msg_buf *hub_take_upload(hub *h, uint32_t id) {
    msg_buf *b = NULL;
    pthread_mutex_lock(&h->mtx);
    for (int i = 0; i < HUB_UPLOADS; i++)
        if (h->upload[i].buf && h->upload[i].id == id) {
            b = h->upload[i].buf;
            h->upload[i].buf = NULL;
        }
    pthread_mutex_unlock(&h->mtx);
    return b;
}

void hub_drop_upload(hub *h, uint32_t id) {
    msg_buf_unref(hub_take_upload(h, id));
}
