import { runArea } from './run-area';

runArea('client-api');
