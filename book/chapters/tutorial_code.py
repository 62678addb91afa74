"""Multi-head attention classes from four other tutorials, verbatim, kept as text because they have defects.

The chapter "The code in practice" runs each of them to show what goes wrong, next to
:class:`mha.MultiHeadAttention`. They come from Chinese-language tutorials on multi-head attention
(多头注意力) that the book's authors collected as source material; the code is copied as published (only
trailing spaces were removed), so do not use it. It is stored as strings, not as Python in this package, so
that no linter or formatter "fixes" it, nothing imports it by accident, and the chapter can print exactly
what the tutorial printed.

    A  forward(Q, K, V, mask); fills masked scores with -1e9 and returns only the output
    B  forward(x, mask); self-attention only; fills masked scores with -inf; returns (output, weights)
    C  forward(Q, K, V, mask); fills masked scores with -1e9 and returns only the output
    D  forward(query, key, value, mask); uses math without importing it; -inf fill; dropout 0.1 by
       default; returns only the output
"""

from __future__ import annotations

import types

TUTORIAL_CODE: dict[str, str] = {
    "A": """\
import torch
import torch.nn as nn

class MultiHeadAttention(nn.Module):
    def __init__(self, d_model=512, h=8):
        super().__init__()
        self.d_model = d_model
        self.h = h
        self.d_k = d_model // h

        # 线性变换矩阵
        self.W_Q = nn.Linear(d_model, d_model)
        self.W_K = nn.Linear(d_model, d_model)
        self.W_V = nn.Linear(d_model, d_model)
        self.W_O = nn.Linear(d_model, d_model)

    def forward(self, Q, K, V, mask=None):
        batch_size = Q.size(0)

        # 拆分多头
        Q = self.W_Q(Q).view(batch_size, -1, self.h, self.d_k).transpose(1, 2)
        K = self.W_K(K).view(batch_size, -1, self.h, self.d_k).transpose(1, 2)
        V = self.W_V(V).view(batch_size, -1, self.h, self.d_k).transpose(1, 2)

        # 计算注意力
        scores = torch.matmul(Q, K.transpose(-2, -1)) / torch.sqrt(torch.tensor(self.d_k))
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        attn_weights = torch.softmax(scores, dim=-1)
        output = torch.matmul(attn_weights, V)

        # 合并多头
        output = output.transpose(1, 2).contiguous().view(batch_size, -1, self.d_model)
        return self.W_O(output)
""",
    "B": """\
import torch
import torch.nn as nn
import math

class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        assert d_model % num_heads == 0

        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads

        # Q、K、V 投影（一次性计算所有 head）
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)

        # 输出投影
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        batch_size, seq_len, _ = x.shape

        # 1. 线性投影
        Q = self.W_q(x)  # [batch, seq_len, d_model]
        K = self.W_k(x)
        V = self.W_v(x)

        # 2. 分割成多个头
        Q = Q.view(batch_size, seq_len, self.num_heads, self.d_k).transpose(1, 2)
        K = K.view(batch_size, seq_len, self.num_heads, self.d_k).transpose(1, 2)
        V = V.view(batch_size, seq_len, self.num_heads, self.d_k).transpose(1, 2)
        # 现在: [batch, num_heads, seq_len, d_k]

        # 3. 计算 attention
        scores = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float('-inf'))
        attention_weights = torch.softmax(scores, dim=-1)
        heads = torch.matmul(attention_weights, V)

        # 4. 拼接所有 head
        concat = heads.transpose(1, 2).contiguous().view(batch_size, seq_len, self.d_model)

        # 5. 最终投影
        output = self.W_o(concat)

        return output, attention_weights
""",
    "C": """\
import torch
import torch.nn as nn
import math

class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super(MultiHeadAttention, self).__init__()
        assert d_model % num_heads == 0
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, Q, K, V, mask=None):
        batch_size = Q.size(0)
        Q = self.W_q(Q).view(batch_size, -1, self.num_heads, self.d_k).transpose(1, 2)
        K = self.W_k(K).view(batch_size, -1, self.num_heads, self.d_k).transpose(1, 2)
        V = self.W_v(V).view(batch_size, -1, self.num_heads, self.d_k).transpose(1, 2)

        scores = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        attn = torch.softmax(scores, dim=-1)
        context = torch.matmul(attn, V)
        context = context.transpose(1, 2).contiguous().view(batch_size, -1, self.d_model)
        output = self.W_o(context)
        return output
""",
    "D": """\
import torch
from torch import nn

class MultiHeadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, dropout=0.1):
        super(MultiHeadAttention, self).__init__()
        assert embed_dim % num_heads == 0

        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads

        # Linear layers for QKV projections and output projection
        self.q_linear = nn.Linear(embed_dim, embed_dim)
        self.k_linear = nn.Linear(embed_dim, embed_dim)
        self.v_linear = nn.Linear(embed_dim, embed_dim)

        self.out_linear = nn.Linear(embed_dim, embed_dim)

        # Dropout layer
        self.dropout = nn.Dropout(dropout)

    def forward(self, query, key, value, mask=None):
        batch_size = query.size(0)

        # Projecting to the subspaces
        q = self.q_linear(query).view(batch_size, -1, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_linear(key).view(batch_size, -1, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v_linear(value).view(batch_size, -1, self.num_heads, self.head_dim).transpose(1, 2)

        # Scaling
        scaled_dot_product = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)

        # Applying attention mask if provided
        if mask is not None:
            scaled_dot_product = scaled_dot_product.masked_fill(mask == 0, float('-inf'))

        # Computing attention probabilities
        attention_probs = torch.softmax(scaled_dot_product, dim=-1)

        # Apply dropout
        attention_probs = self.dropout(attention_probs)

        # Compute the weighted sum of values
        context = torch.matmul(attention_probs, v)

        # Reshape back to original size
        context = context.transpose(1, 2).contiguous().view(batch_size, -1, self.embed_dim)

        return self.out_linear(context)
""",
}


def tutorial_source(key: str) -> str:
    """The source of tutorial ``key``'s class, exactly as stored in :data:`TUTORIAL_CODE`."""
    if key not in TUTORIAL_CODE:
        raise KeyError(f"unknown tutorial {key!r}; choose one of {sorted(TUTORIAL_CODE)}")
    return TUTORIAL_CODE[key]


def tutorial_class(key: str) -> type:
    """Run tutorial ``key``'s code in a fresh namespace and return its ``MultiHeadAttention`` class.

    The code runs as the tutorial wrote it, imports included, so its defects show when the class is
    instantiated or called, not here.
    """
    module = types.ModuleType(f"mha.tutorial_code.{key}")
    exec(compile(tutorial_source(key), f"<tutorial {key}>", "exec"), module.__dict__)
    return module.MultiHeadAttention
