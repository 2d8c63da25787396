import { render } from 'preact';
render(<p>Callplane</p>, document.getElementById('app')!);
