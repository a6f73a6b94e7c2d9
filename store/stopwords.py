"""Stopwords the keyword retriever leaves out of a query: English function words (the usual list of
information retrieval, question words included: "when did Caroline go" is about Caroline, not
about "when" or "did") and Chinese function words and particles, as the index spells them (single
characters, and words of two characters: the bigrams :func:`store.text.terms` makes). Data only.

They stay in the index (a later list may differ, and a phrase query may need them); only queries
skip them. A query made of nothing else keeps its terms (see :func:`store.keyword.query_plan`).
"""

from __future__ import annotations

from memwarden.store.text import terms

ENGLISH = frozenset(
    """
    a about above after again against all am an and any are aren as at be because been before being
    below between both but by can cannot could couldn did didn do does doesn doing don down during each
    few for from further had hadn has hasn have haven having he her here hers herself him himself his
    how i if in into is isn it its itself just ll me more most mustn my myself no nor not now of off on
    once only or other ought our ours ourselves out over own re s same shan she should shouldn so some
    such t than that the their theirs them themselves then there these they this those through to too
    under until up ve very was wasn we were weren what when where which while who whom why will with
    won would wouldn you your yours yourself yourselves d m o y also ever got get gets getting go goes
    going went gone did does done really yes yeah ok okay oh hey hi please thanks thank
    """.split()
)

CHINESE = frozenset(
    """
    的 了 是 在 吗 呢 吧 啊 呀 哦 嗯 和 与 及 或 也 都 就 还 又 再 才 很 太 更 最 被 把 给 对 向 从 到
    让 个 些 这 那 哪 谁 么 啥 之 其 而 且 着 过 地 得 我 你 他 她 它 您
    什么 怎么 怎样 为何 哪里 哪儿 哪个 哪些 多少 几个 时候 我们 你们 他们 她们 它们 咱们 大家
    一个 一些 这个 那个 这些 那些 这样 那样 这么 那么 没有 可以 就是 还是 但是 因为 所以 如果 虽然
    已经 自己 然后 或者 而且 不过 只是 一下 一起 有点 觉得 知道 后来 当时 之前 之后 是不 是否
    """.split()
)


# As the index spells them: stemmed ("does" is "doe" there).
_TERMS = frozenset(t for word in ENGLISH for t in terms(word)) | ENGLISH | CHINESE


def is_stopword(term: str) -> bool:
    """Whether an index term (casefolded and stemmed, as :func:`store.text.terms` makes it) is a
    stopword."""
    return term in _TERMS
