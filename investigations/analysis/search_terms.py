"""The terms of a text, for search in English and Chinese alike.

Chinese has no spaces between words, so a word search finds nothing in it, and the usual
database tools fail it (pg_trgm makes no trigrams of CJK under lc_ctype=C; SQLite's FTS5
trigram tokenizer never matches a query of one or two characters, and most Chinese words
have two). So a text becomes terms here, the same way on save and on query, and the index
is a plain table on any database:

- Latin words, lowercased ("powersave", "futex", "cpu.governor"), and the parts of joined
  words ("cpu", "governor"; "_raw_spin_unlock_irqrestore" also as "raw", "spin", ...);
- each run of Chinese characters as jieba segments it for search (words, and the shorter
  words inside long ones), with the domain's words added to its dictionary ("透明大页",
  "短连接", "写缓存"), and as its overlapping character pairs ("节能" in "节能模式",
  whatever jieba made of it) and, for a run of one character, that character.

Pure: text in, terms out (jieba's dictionary loads once, on first use, in about half a second).
"""

import logging
import re
import threading
from collections import Counter

MAX_TERM = 64
# A run of CJK ideographs (with the compatibility block), or a Latin word with its joints.
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[0-9a-z][0-9a-z_.+\-/]*[0-9a-z+]|[0-9a-z]")
_PARTS = re.compile(r"[0-9a-z]+")
# Words of the domain, kept whole by the segmenter (it also keeps their pairs).
DOMAIN_WORDS = (
    "透明大页",
    "大页",
    "短连接",
    "长连接",
    "写缓存",
    "预读",
    "节能",
    "节能模式",
    "调频",
    "调频策略",
    "自旋锁",
    "漏洞缓解",
    "内核版本",
    "虚拟化",
    "超售",
    "零窗口",
    "重传",
    "握手",
    "抓包",
    "火焰图",
    "阶梯压测",
    "拐点",
    "时钟源",
    "垃圾回收",
    "连接池",
    "日志锁",
    "同步日志",
)

_jieba = None
_lock = threading.Lock()


def _segmenter():
    global _jieba
    with _lock:
        if _jieba is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            for word in DOMAIN_WORDS:
                jieba.add_word(word, freq=200_000)
            _jieba = jieba
    return _jieba


def _chinese(run: str) -> list[str]:
    found = [word for word in _segmenter().cut_for_search(run) if _CJK.fullmatch(word)]
    found += [run[i : i + 2] for i in range(len(run) - 1)]
    if len(run) == 1:
        found.append(run)
    return found


def _latin(text: str) -> list[str]:
    found = []
    for word in _WORD.findall(text):
        found.append(word)
        parts = _PARTS.findall(word)
        if len(parts) > 1:
            found += parts
    return found


def terms(text: str) -> Counter:
    """Every term of a text and how often it occurs."""
    text = text.lower()
    found = _latin(_CJK.sub(" ", text))
    for run in _CJK.findall(text):
        found += _chinese(run)
    return Counter(term[:MAX_TERM] for term in found if term)


def query_terms(text: str) -> list[str]:
    """The distinct terms of a query, in the order typed."""
    return list(dict.fromkeys(terms(text)))


def is_latin(term: str) -> bool:
    return not _CJK.search(term)
