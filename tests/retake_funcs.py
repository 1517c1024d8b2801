"""Functions reading a view of an array after a write into that array (the stage
``retake`` takes the view again where it is read), and some it leaves refused."""

import numpy as np


def ravel_read_after_write(x, s):
    h = x * s
    out = np.zeros((2, 2))
    flat = np.ravel(out)
    out[0, 1] = h[0]
    out[1, :] = np.sin(h[1:3])
    return np.sum(h * np.sum(flat * flat)) + np.sum(flat)


def transpose_read_after_write(x):
    grid = np.zeros((2, 3))
    cols = grid.T
    grid[0] = np.tanh(x)
    grid[1, :] = x * x
    return np.sum(cols[:, 1] * np.cos(cols[:, 0]))


def reshaped_rows_in_a_loop(x):
    # the view is made before the loop; every pass writes a row, then reads all of it
    buf = np.ones((3, 2))
    flat = buf.reshape(6)
    total = 0.0
    for i in range(3):
        buf[i, :] = x[i] * x[:2] + 0.5
        total = total + np.sum(np.sin(flat) * flat)
    return total


def sliced_and_swapped(x, w):
    acc = np.full((2, 3), 0.25)
    tail = acc[:, 1:]
    both = np.swapaxes(acc, 0, 1)
    acc[0, :] = x * w
    acc[1, 0] += np.sum(x)
    return np.sum(tail * tail) + np.sum(both[1] * w[1:3].sum())


def vector_of_views(x):
    out = np.zeros((2, 3))
    t = np.transpose(out)
    out[1] = np.exp(x)
    return t[:, 1] * 2.0 + x


def item_read_after_write(x):
    # out[1] of a vector is a number, copied where it is read: it keeps the old value
    out = np.zeros(3)
    out[1] = np.cos(x[1])
    item = out[1]
    out[1] = x[0] * 3.0
    return item * x[2] + np.sum(out * x)


def row_of_unknown_rank_read_after_write(x):
    # out[1] is a number or a row, as x's shape says: not known where it is compiled
    out = np.zeros(x.shape)
    row = out[1]
    out[1] = x[0] * 3.0
    return np.sum(row * x[2])


def view_of_a_copy_read_after_write(x):
    # x.copy() may be a list, whose slices are copies: not taken again
    out = x.copy()
    head = out[:2]
    out[0] = 5.0
    return np.sum(head * x[:2])


def view_written_into_then_read(x):
    out = np.zeros((2, 2))
    col = out[:, 0]
    col[1] = x[0]
    out[0, 1] = x[1]
    return np.sum(col * x[:2])


def item_of_matrix_read_after_write(x):
    # out[0, 1] of a matrix is a number: it keeps the value it had where it was read
    out = np.zeros((2, 2))
    out[0, 1] = np.sin(x[0])
    item = out[0, 1]
    out[0, 1] = x[1] * 3.0
    return item * x[2] + np.sum(out * out)


def updated_items_then_swapped(x, s):
    # ``out[0, 0] += v`` reads the item before writing it; a gradient read again (second
    # order) holds that item after the writes
    h = np.sin(x) + s
    out = np.zeros((2, 2), dtype=h.dtype)
    out[0, 1] = h[0] * 1.2
    out[1, :] = np.sin(h[1:]) * s
    out[0, 0] += h[2]
    r = np.swapaxes(out, 0, 1)
    h = h * np.sum(r * r) + np.sum(r[1:]) * 0.3
    return np.sum(h * h) * 0.5


def row_read_after_a_write_to_another_row(x):
    # out[0] is a number (x a vector) or a row (x a matrix); the writes reach other rows
    out = x.copy()
    first = out[0]
    out[1] = first * 3.0
    out[2] = np.sin(out[1]) * first
    return np.sum(out * x) + np.sum(first * x[2])


def copy_written_from_its_first_item(x, s):
    # a gradient read again (second order) holds out[0] after the write into out[1]
    h = np.sin(x) + s
    out = h.copy()
    out[1] = out[0] * s
    h = out * h
    return np.mean(np.sin(h) * h)


def row_read_after_a_negative_index_write(x):
    # out[-3] is out[0] where out has three rows: not known apart
    out = x.copy()
    first = out[0]
    out[-3] = x[1] * 2.0
    return np.sum(first * x)


def row_read_after_a_column_write(x):
    # out[:, 1] crosses out[0]
    out = x.copy()
    first = out[0]
    out[:, 1] = x[1] * 2.0
    return np.sum(first * x)
