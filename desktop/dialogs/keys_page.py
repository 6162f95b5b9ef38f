"""API keys page: keys go only to the OS keyring (or this session's memory) through `KeyStore`.

The page names the keyring backend. Without a secure one (headless Linux gets
keyring's `fail` backend) it says so and offers a session-only key or an
environment variable; there is no file fallback. Keys are never put in
QSettings, logs or messages, and the fields are emptied once saved.
"""

from __future__ import annotations

import keyring.errors
from PySide6.QtWidgets import QGridLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from core.providers.embedding import default_registry
from desktop.controller import AppController
from desktop.dialogs.settings_pages import SettingsDraft, SettingsPanelBase
from desktop.services import llm_providers


def key_providers() -> list[tuple[str, str, str | None]]:
    """(id, label, environment variable) of every provider that takes a key, embedding or language model."""
    seen: dict[str, tuple[str, str, str | None]] = {}
    for info in default_registry().values():
        if info.needs_key:
            seen.setdefault(info.id, (info.id, info.label, info.key_env_var))
    for llm in llm_providers().values():
        if llm.needs_key:
            seen.setdefault(llm.id, (llm.id, llm.label, llm.key_env_var))
    return list(seen.values())


class ApiKeysSettingsPanel(SettingsPanelBase):
    """One row per provider: a password field, where its key comes from now, and Remove."""

    title = "API keys"

    def __init__(self, controller: AppController, parent: QWidget | None = None) -> None:
        super().__init__(controller, parent)
        self._keys = controller.keys
        self.backend = QLabel(self)
        self.backend.setWordWrap(True)
        self.backend.setAccessibleName("Where keys are stored")
        self.fields: dict[str, QLineEdit] = {}
        self.sources: dict[str, QLabel] = {}
        self.result = QLabel(self)
        self.result.setWordWrap(True)
        self.result.setAccessibleName("Key storage result")
        grid = QGridLayout()
        for row, (pid, label, _env) in enumerate(key_providers()):
            field = QLineEdit(self)
            field.setEchoMode(QLineEdit.EchoMode.Password)
            field.setAccessibleName(f"API key for {label}")
            field.setPlaceholderText("paste a new key to store it")
            source = QLabel(self)
            source.setAccessibleName(f"Where the {label} key comes from")
            remove = QPushButton("Remove", self)
            remove.setAccessibleName(f"Remove the {label} key")
            remove.clicked.connect(lambda _=False, p=pid: self.remove(p))
            grid.addWidget(QLabel(label, self), row, 0)
            grid.addWidget(field, row, 1)
            grid.addWidget(remove, row, 2)
            grid.addWidget(source, row, 3)
            self.fields[pid] = field
            self.sources[pid] = source
        self._env = {pid: env for pid, _, env in key_providers()}
        layout = QVBoxLayout(self)
        layout.addWidget(self.backend)
        layout.addLayout(grid)
        layout.addWidget(self.result)
        layout.addStretch(1)

    def load(self, draft: SettingsDraft) -> None:
        name = self._keys.backend_name()
        self.backend.setToolTip(f"Keyring backend: {name}")  # the technical name, for whoever needs it
        if self._keys.is_secure():
            self.backend.setText("Keys are stored in your system keyring, never in a settings file.")
        else:
            envs = ", ".join(sorted({e for e in self._env.values() if e}))
            self.backend.setText(
                "<b>No secure keyring on this system.</b> Cairn will not write keys to a file. "
                f"A key entered here is kept for this session only and forgotten when Cairn quits; to keep one, set "
                f"the environment variable ({envs}) before starting Cairn, or install a keyring service."
            )
        for pid in self.fields:
            self.fields[pid].clear()
            self._show_source(pid)

    def save(self, draft: SettingsDraft) -> None:
        """Store typed keys: keyring when secure, this session's memory otherwise. The draft holds no key."""
        messages = []
        for pid, field in self.fields.items():
            key = field.text().strip()
            if not key:
                continue
            try:
                if self._keys.is_secure():
                    self._keys.set(pid, key)
                    messages.append(f"{pid}: stored in the keyring")
                else:
                    self._keys.set_session(pid, key)
                    messages.append(f"{pid}: kept for this session only")
            except keyring.errors.KeyringError as exc:
                self._keys.set_session(pid, key)
                messages.append(f"{pid}: the keyring refused it ({type(exc).__name__}); kept for this session only")
            field.clear()
            self._show_source(pid)
        self.result.setText("; ".join(messages))

    def remove(self, pid: str) -> None:
        try:
            self._keys.delete(pid)
        except keyring.errors.KeyringError as exc:
            self.result.setText(f"Could not remove the {pid} key from the keyring ({type(exc).__name__})")
            return
        self.fields[pid].clear()
        self._show_source(pid)
        self.result.setText(f"{pid}: key removed")

    def _show_source(self, pid: str) -> None:
        env = self._env.get(pid)
        stored = self._keys.has_stored(pid)
        if stored:
            text = "stored in keyring"
        elif self._keys.get(pid):  # not in the keyring, no env var asked: a session key
            text = "session only"
        elif env and self._keys.get(pid, env):
            text = f"from ${env}"
        else:
            text = "not set"
        self.sources[pid].setText(text)
