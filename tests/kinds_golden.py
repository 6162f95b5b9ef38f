"""A golden set per kind: ten facts written into a file of that kind, ten questions about them.

Each fact sits under its own heading (a Word section, an e-book chapter, a mail's subject, a
chat conversation), among filler units, so a question must find the right unit, not just the
file. Python's own documentation (Debian's python3-doc) gives the web-page questions.
"""

from __future__ import annotations

import mailbox
from email.message import EmailMessage
from pathlib import Path

# (heading, fact, question): the question shares few words with the fact on purpose.
DOCX = [
    ("Budget", "The heron survey cost 4,200 euros, paid from the regional wetlands fund.", "How much did the heron survey cost?"),
    ("Volunteers", "Eleven volunteers counted birds, most of them retired teachers from Leiden.", "Who were the volunteers who counted birds?"),
    ("Weather", "Fog delayed the dawn counts on six mornings in February.", "What delayed the dawn counts?"),
    ("Equipment", "Two spotting scopes were borrowed from the university's biology department.", "Where were the spotting scopes borrowed from?"),
    ("Nest sites", "Grey herons nested in the alder grove on the east bank, 38 nests in all.", "How many heron nests were in the alder grove?"),
    ("Predators", "A pair of foxes raided three nests before the fence was mended.", "Which predator raided the nests?"),
    ("Water levels", "The polder pumps kept the water 20 centimetres below the usual spring level.", "Why was the water lower than usual in spring?"),
    ("Ringing", "Forty chicks were ringed with blue colour rings under licence 2024-117.", "How many chicks were ringed?"),
    ("Publication", "Results will appear in the Dutch Birding journal next autumn.", "Where will the results be published?"),
    ("Next year", "Next season the count moves to the Oostvaardersplassen reserve.", "Where will the count take place next season?"),
]
EPUB = [
    ("The Bittern", "The bittern's booming call carries five kilometres across the reeds.", "How far does the bittern's call carry?"),
    ("The Avocet", "Avocets sweep their upturned bills sideways through soft mud to catch shrimp.", "How do avocets feed?"),
    ("The Spoonbill", "Spoonbills returned to breed in the Netherlands after an absence of decades.", "Where did spoonbills come back to breed?"),
    ("The Kingfisher", "A kingfisher digs a tunnel nest up to a metre deep in a sandy riverbank.", "How deep is a kingfisher's tunnel nest?"),
    ("The Marsh Harrier", "Marsh harriers pass prey to each other in mid-air during courtship.", "What do marsh harriers do during courtship?"),
    ("The Bearded Reedling", "Bearded reedlings switch from insects in summer to reed seeds in winter.", "What do bearded reedlings eat in winter?"),
    ("The Purple Heron", "Purple herons winter in West Africa, south of the Sahara.", "Where do purple herons spend the winter?"),
    ("The Water Rail", "The water rail squeals like a piglet from deep inside the reed bed.", "What does the water rail sound like?"),
    ("The Black Tern", "Black terns build floating nests on water-soldier plants.", "What do black terns build their nests on?"),
    ("The Great Egret", "Great egrets were hunted almost to extinction for hat plumes around 1900.", "Why were great egrets nearly wiped out?"),
]
MAIL = [
    ("Boiler service booked", "The plumber comes on Thursday at 8 to service the boiler.", "When is the boiler service?"),
    ("Allotment rent", "The allotment rent went up to 85 euros a year from April.", "How much is the allotment rent now?"),
    ("Passport renewal", "Bring two photos and the old passport to the town hall on the 14th.", "What do I need to bring to renew the passport?"),
    ("Book club pick", "Next month the book club reads Middlemarch by George Eliot.", "Which novel is the book club reading next?"),
    ("Car insurance", "The new car insurance policy number is KX-44-901 with Centraal Beheer.", "What is the car insurance policy number?"),
    ("School trip", "The school trip to the zoo costs 12 euros and leaves at 9 from the main gate.", "How much is the school trip to the zoo?"),
    ("Wifi password", "The guest wifi password for the cabin is lingonberry42.", "What is the cabin's guest wifi password?"),
    ("Dentist moved", "The dentist moved to Kerkstraat 12 above the bakery.", "Where is the dentist's new address?"),
    ("Cat sitter", "Marta will feed the cat twice a day while we are in Porto.", "Who is feeding the cat while we are away?"),
    ("Bike repair", "The bike shop replaced the rear derailleur for 64 euros.", "What did the bike shop replace?"),
]
CHAT = [
    ("Sourdough starter", "Feed the starter at a 1:5:5 ratio when the kitchen is warm.", "What feeding ratio for the sourdough starter?"),
    ("Python dataclass", "Use field(default_factory=list) for a mutable default in a dataclass.", "How do I give a dataclass a list default?"),
    ("Tomato blight", "Remove the lower leaves and water at the base to keep blight away from tomatoes.", "How to prevent blight on tomatoes?"),
    ("Git undo", "git reset --soft HEAD~1 undoes the last commit but keeps the changes staged.", "How do I undo my last git commit but keep the changes?"),
    ("Running plan", "Run three times a week and add no more than ten percent distance each week.", "How fast should I increase my running distance?"),
    ("Cast iron care", "Dry the cast iron pan on the stove and rub in a thin film of oil.", "How should I care for a cast iron pan?"),
    ("Spanish verbs", "Ser is for permanent traits and estar for states and locations.", "When do I use ser versus estar?"),
    ("Houseplant light", "A snake plant tolerates a dim north-facing room.", "Which plant copes with a dark north-facing room?"),
    ("Budget spreadsheet", "SUMIF totals the expenses of one category in the budget sheet.", "Which formula totals one expense category?"),
    ("Bread rise", "A cold overnight rise in the fridge gives the loaf a more sour taste.", "How do I make my bread taste more sour?"),
]
HTML = [  # (page under /usr/share/doc/python3-doc/html/library, question)
    ("json.html", "How do I pretty-print JSON with an indent?"),
    ("shutil.html", "How do I copy a whole directory tree?"),
    ("pathlib.html", "How do I get a file's suffix from a path object?"),
    ("csv.html", "How do I read rows of a CSV file as dictionaries?"),
    ("datetime.html", "How do I parse a date string with strptime?"),
    ("random.html", "How do I pick a random element from a list?"),
    ("itertools.html", "How do I chain several iterables together?"),
    ("subprocess.html", "How do I run a command and capture its output?"),
    ("argparse.html", "How do I add an optional command-line flag?"),
    ("collections.html", "How do I count hashable items with a Counter?"),
]
FILLER = "This part lists routine matters of no lasting interest, kept for the record only."


def write_golden_docx(path: Path) -> Path:
    import docx

    doc = docx.Document()
    doc.add_heading("Heron Survey Report", level=0)
    for heading, fact, _ in DOCX:
        doc.add_heading(heading, level=1)
        doc.add_paragraph(f"{FILLER} {fact}")
    doc.save(str(path))
    return path


def write_golden_epub(path: Path) -> Path:
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier("golden-birds")
    book.set_title("Birds of the Marsh")
    book.set_language("en")
    chapters = []
    for n, (heading, fact, _) in enumerate(EPUB, 1):
        ch = epub.EpubHtml(title=heading, file_name=f"c{n}.xhtml", lang="en")
        ch.content = f"<h1>{heading}</h1><p>{FILLER}</p><h2>Habits</h2><p>{fact}</p>"
        book.add_item(ch)
        chapters.append(ch)
    book.toc = chapters
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = chapters
    epub.write_epub(str(path), book)
    return path


def write_golden_mbox(path: Path, filler: int = 190) -> Path:
    box = mailbox.mbox(str(path), create=True)
    facts = iter(MAIL)
    for n in range(filler + len(MAIL)):
        msg = EmailMessage()
        subject, body = (f"Weekly newsletter {n}", FILLER) if n % 20 else next(facts)[:2]
        msg["Subject"], msg["From"], msg["To"] = subject, "friend@example.org", "me@example.org"
        msg["Date"] = f"Mon, {1 + n % 28:02d} Apr 2024 09:00:00 +0000"
        msg.set_content(body)
        box.add(msg)
    box.flush()
    box.close()
    return path


def golden_chat(filler: int = 40) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for n, (title, answer, question) in enumerate(CHAT):
        out.append(_conversation(title, question, answer, n))
    for n in range(filler):
        out.append(_conversation(f"Small talk {n}", "Tell me a fun fact.", FILLER, 100 + n))
    return out


def _conversation(title: str, question: str, answer: str, n: int) -> dict[str, object]:
    mapping = {
        "a": {"message": {"author": {"role": "user"}, "content": {"parts": [question]}}, "parent": None},
        "b": {"message": {"author": {"role": "assistant"}, "content": {"parts": [answer]}}, "parent": "a"},
    }
    return {"title": title, "create_time": 1_710_000_000 + n * 3600, "mapping": mapping, "current_node": "b"}
