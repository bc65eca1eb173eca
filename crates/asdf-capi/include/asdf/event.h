/*
 * asdf/event.h: the parser's events (the event-level parser is not provided by asdf-rs yet;
 * the type is declared for the headers that name it).
 */
#ifndef ASDF_EVENT_H
#define ASDF_EVENT_H

#include <asdf/util.h>

ASDF_BEGIN_DECLS

typedef struct asdf_event asdf_event_t;

ASDF_END_DECLS

#endif /* ASDF_EVENT_H */
