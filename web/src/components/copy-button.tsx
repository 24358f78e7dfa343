/**
 * Copies a text to the clipboard, saying so next to the button. The Clipboard API needs a secure
 * context (https, or a loopback host); elsewhere the page selects a hidden copy and asks the
 * browser to copy the selection, and if that fails too it says to copy by hand.
 */
import { useState } from 'preact/hooks';

async function copyText(text: string): Promise<boolean> {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // Refused (no permission, page not focused): try the selection below.
    }
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'visually-hidden';
  document.body.append(area);
  area.select();
  try {
    // Deprecated, yet the only way to copy outside a secure context.
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    area.remove();
  }
}

export function CopyButton({ text, label, what }: { text: string; label: string; /** Named in the answer, e.g. "the secret". */ what: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <span class="copy">
      <button type="button" onClick={async () => setState((await copyText(text)) ? 'copied' : 'failed')}>
        {label}
      </button>
      <span class={state === 'failed' ? 'field-problem' : 'small muted'} aria-live="polite">
        {state === 'copied' ? `Copied ${what}.` : state === 'failed' ? `Could not copy ${what}: select it and copy it by hand.` : ''}
      </span>
    </span>
  );
}
