"""When each model of :data:`mha.costs.MODEL_CONFIGS` was released, with the source of the date.

``released`` (``YYYY-MM-DD``, or ``YYYY-MM`` where only the month is confirmed) is the day the model was
first published: its release post, model card or report, or for the models of research papers (2017-2023)
the paper's first arXiv version, whichever came first. Weights that followed later (GPT-2's larger sizes in
2019) and papers after the weights (Falcon's, Mistral 7B's) do not move it. A date whose primary source could
not be confirmed is ``None``, its ``source`` says why, and the model then belongs to neither group of
:func:`mha.costs.models_released`.

The chapters group the models by :data:`RELEASE_CUT`: released before it (up to June 2025) or from it on
(July 2025 and later), not by where a model sits in the table.
"""

from __future__ import annotations

from typing import NamedTuple


class Release(NamedTuple):
    """A model's release: ``date``, ``YYYY-MM-DD`` or ``YYYY-MM`` (``None``: not confirmed), and where."""

    date: str | None
    source: str


# The first day of the later group: the models released from July 2025 on.
RELEASE_CUT = "2025-07-01"

RELEASES: dict[str, Release] = {
    "Transformer base": Release(
        "2017-06-12",
        "arXiv 1706.03762, first version 12 June 2017",
    ),
    "Transformer big": Release(
        "2017-06-12",
        "arXiv 1706.03762, first version 12 June 2017",
    ),
    "BERT-base": Release(
        "2018-10-11",
        "arXiv 1810.04805, first version 11 October 2018",
    ),
    "BERT-large": Release(
        "2018-10-11",
        "arXiv 1810.04805, first version 11 October 2018",
    ),
    "GPT-2 small": Release(
        "2019-02-14",
        "OpenAI, 'Better language models and their implications', 14 February 2019 "
        "(https://openai.com/index/better-language-models/), with the paper; the larger weights followed "
        "in May, August and November 2019",
    ),
    "GPT-2 medium": Release(
        "2019-02-14",
        "OpenAI, 'Better language models and their implications', 14 February 2019 "
        "(https://openai.com/index/better-language-models/), with the paper; the larger weights followed "
        "in May, August and November 2019",
    ),
    "GPT-2 large": Release(
        "2019-02-14",
        "OpenAI, 'Better language models and their implications', 14 February 2019 "
        "(https://openai.com/index/better-language-models/), with the paper; the larger weights followed "
        "in May, August and November 2019",
    ),
    "GPT-2 XL": Release(
        "2019-02-14",
        "OpenAI, 'Better language models and their implications', 14 February 2019 "
        "(https://openai.com/index/better-language-models/), with the paper; the larger weights followed "
        "in May, August and November 2019",
    ),
    "GPT-3 175B": Release(
        "2020-05-28",
        "arXiv 2005.14165, first version 28 May 2020",
    ),
    "T5-base": Release(
        "2019-10-23",
        "arXiv 1910.10683, first version 23 October 2019",
    ),
    "T5-large": Release(
        "2019-10-23",
        "arXiv 1910.10683, first version 23 October 2019",
    ),
    "ViT-B/16": Release(
        "2020-10-22",
        "arXiv 2010.11929, first version 22 October 2020",
    ),
    "ViT-H/14": Release(
        "2020-10-22",
        "arXiv 2010.11929, first version 22 October 2020",
    ),
    "LLaMA 7B": Release(
        "2023-02-24",
        "Meta AI, 'Introducing LLaMA', 24 February 2023; arXiv 2302.13971",
    ),
    "LLaMA 65B": Release(
        "2023-02-24",
        "Meta AI, 'Introducing LLaMA', 24 February 2023; arXiv 2302.13971",
    ),
    "Llama 2 7B": Release(
        "2023-07-18",
        "arXiv 2307.09288, first version 18 July 2023, the release day",
    ),
    "Llama 2 70B": Release(
        "2023-07-18",
        "arXiv 2307.09288, first version 18 July 2023, the release day",
    ),
    "Llama 3.1 8B": Release(
        "2024-07-23",
        "Meta AI, 'Introducing Llama 3.1', 23 July 2024 (https://ai.meta.com/blog/meta-llama-3-1/); the "
        "report, arXiv 2407.21783, followed on 31 July",
    ),
    "Llama 3.1 70B": Release(
        "2024-07-23",
        "Meta AI, 'Introducing Llama 3.1', 23 July 2024 (https://ai.meta.com/blog/meta-llama-3-1/); the "
        "report, arXiv 2407.21783, followed on 31 July",
    ),
    "Llama 3.1 405B": Release(
        "2024-07-23",
        "Meta AI, 'Introducing Llama 3.1', 23 July 2024 (https://ai.meta.com/blog/meta-llama-3-1/); the "
        "report, arXiv 2407.21783, followed on 31 July",
    ),
    "Mistral 7B": Release(
        "2023-09-27",
        "Mistral AI, 'Mistral 7B', 27 September 2023 (https://mistral.ai/news/announcing-mistral-7b); the"
        " paper, arXiv 2310.06825, followed on 10 October",
    ),
    "PaLM 62B": Release(
        "2022-04-05",
        "arXiv 2204.02311, first version 5 April 2022",
    ),
    "Falcon-7B": Release(
        "2023-05",
        "TII released Falcon-40B and Falcon-7B in May 2023 (https://falconllm.tii.ae; tiiuae/falcon-7b on"
        " Hugging Face), before the paper (arXiv 2311.16867, November 2023); the day is not confirmed",
    ),
    "Gemma 2 27B": Release(
        "2024-06-27",
        "Google, 'Gemma 2 is now available', 27 June 2024 "
        "(https://blog.google/technology/developers/google-gemma-2/)",
    ),
    "Gemma 3 27B": Release(
        "2025-03-12",
        "Google, 'Introducing Gemma 3', 12 March 2025 (https://blog.google/technology/developers/gemma-3/)",
    ),
    "Llama 4 Scout": Release(
        "2025-04-05",
        "Meta AI, 'The Llama 4 herd', 5 April 2025 "
        "(https://ai.meta.com/blog/llama-4-multimodal-intelligence/): Scout and Maverick released "
        "together",
    ),
    "Llama 4 Maverick": Release(
        "2025-04-05",
        "Meta AI, 'The Llama 4 herd', 5 April 2025 "
        "(https://ai.meta.com/blog/llama-4-multimodal-intelligence/): Scout and Maverick released "
        "together",
    ),
    "Qwen3-8B": Release(
        "2025-04-29",
        "Qwen, 'Qwen3: Think deeper, act faster', 29 April 2025 (https://qwenlm.github.io/blog/qwen3/)",
    ),
    "Qwen3-235B-A22B": Release(
        "2025-04-29",
        "Qwen, 'Qwen3: Think deeper, act faster', 29 April 2025 (https://qwenlm.github.io/blog/qwen3/)",
    ),
    "gpt-oss-20b": Release(
        "2025-08-05",
        "OpenAI, 'Introducing gpt-oss', 5 August 2025 (https://openai.com/index/introducing-gpt-oss/)",
    ),
    "gpt-oss-120b": Release(
        "2025-08-05",
        "OpenAI, 'Introducing gpt-oss', 5 August 2025 (https://openai.com/index/introducing-gpt-oss/)",
    ),
    "DeepSeek-V3": Release(
        "2024-12-26",
        "DeepSeek, the DeepSeek-V3 release, 26 December 2024; the report, arXiv 2412.19437, on 27 December",
    ),
    "Qwen3-Next-80B-A3B": Release(
        "2025-09-11",
        "Qwen, 'Qwen3-Next: towards ultimate training & inference efficiency', 11 September 2025 "
        "(https://qwen.ai/blog?id=qwen3-next), with the weights on Hugging Face",
    ),
    "Qwen3.5-397B-A17B": Release(
        "2026-02-16",
        "Qwen, the Qwen3.5 release post, 16 February 2026 (https://qwen.ai/blog?id=qwen3.5), the series' "
        "first open model",
    ),
    "DeepSeek-V3.2": Release(
        "2025-12-01",
        "DeepSeek, 'DeepSeek-V3.2 release', 1 December 2025 "
        "(https://api-docs.deepseek.com/news/news251201), the successor of V3.2-Exp (29 September 2025)",
    ),
    "DeepSeek-V4-Flash": Release(
        "2026-04-24",
        "DeepSeek, the DeepSeek-V4 preview release, 24 April 2026 "
        "(https://api-docs.deepseek.com/news/news260424): Pro and Flash together",
    ),
    "DeepSeek-V4-Pro": Release(
        "2026-04-24",
        "DeepSeek, the DeepSeek-V4 preview release, 24 April 2026 "
        "(https://api-docs.deepseek.com/news/news260424): Pro and Flash together",
    ),
    "GLM-4.5": Release(
        "2025-07-28",
        "Z.ai, 'GLM-4.5: reasoning, coding, and agentic abilities', 28 July 2025 (https://z.ai/blog/glm-4.5)",
    ),
    "GLM-5": Release(
        "2026-02-11",
        "Z.ai, the GLM-5 technical blog, 11 February 2026 (https://z.ai/blog/glm-5)",
    ),
    "Gemma 4 31B": Release(
        "2026-04-02",
        "Google DeepMind, the Gemma 4 release, 2 April 2026 "
        "(https://huggingface.co/collections/google/gemma-4): 31B, 26B A4B, E4B and E2B together",
    ),
    "Gemma 4 E2B": Release(
        "2026-04-02",
        "Google DeepMind, the Gemma 4 release, 2 April 2026 "
        "(https://huggingface.co/collections/google/gemma-4): 31B, 26B A4B, E4B and E2B together",
    ),
    "Kimi K2": Release(
        "2025-07-11",
        "Moonshot AI, 'Kimi K2: open agentic intelligence', 11 July 2025 "
        "(https://moonshotai.github.io/Kimi-K2/)",
    ),
    "Kimi-Linear-48B-A3B": Release(
        "2025-10-30",
        "Moonshot AI, the Kimi Linear weights and report, 30 October 2025 (arXiv 2510.26692)",
    ),
    "MiniMax-M2": Release(
        "2025-10-27",
        "MiniMax, the MiniMax-M2 release, 27 October 2025 (https://www.minimax.io/news/minimax-m2)",
    ),
    "OLMo 3 7B": Release(
        "2025-11-20",
        "Ai2, 'Olmo 3', 20 November 2025 (https://allenai.org/blog/olmo3)",
    ),
    "SmolLM3-3B": Release(
        "2025-07-08",
        "Hugging Face, 'SmolLM3: smol, multilingual, long-context reasoner', 8 July 2025 "
        "(https://huggingface.co/blog/smollm3)",
    ),
}
