"""Answering questions from the user's notes, with citations that are checked."""

from core.answer.models import AskRequest, AskResponse, Quote, Reference, Source, Turn
from core.answer.pipeline import Answerer

__all__ = ["Answerer", "AskRequest", "AskResponse", "Quote", "Reference", "Source", "Turn"]
