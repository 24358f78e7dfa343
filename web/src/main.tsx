/** Entry point of the dashboard: mounts the app into #app. */
import { render } from 'preact';
import { App } from './app.tsx';
import './styles.css';

render(<App />, document.getElementById('app')!);
