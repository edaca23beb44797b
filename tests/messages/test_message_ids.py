"""Message ids: version-4 UUID strings from a private generator, unique, new in a fork."""

import os
import random
import uuid

import pytest

from nbgraph.messages import add_messages
from nbgraph.messages.ids import new_message_id


def test_ids_are_version_4_uuids_and_do_not_repeat():
    ids = [new_message_id() for _ in range(100_000)]
    assert len(set(ids)) == len(ids)
    for text in ids[:1000]:
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, text)


def test_a_nodes_random_seed_does_not_repeat_ids():
    random.seed(0)
    first = add_messages([], [("user", "hi")])[0].id
    random.seed(0)
    second = add_messages([], [("user", "hi")])[0].id
    assert first != second


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_child_makes_other_ids_than_its_parent():
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids, to the parent
        os.close(read)
        os.write(write, ",".join(new_message_id() for _ in range(5)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = pipe.read().split(",")
    os.waitpid(pid, 0)
    parent = [new_message_id() for _ in range(5)]
    assert len(child) == 5 and not set(child) & set(parent)
